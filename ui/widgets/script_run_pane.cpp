#include "ui/widgets/script_run_pane.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QVBoxLayout>

namespace ampscope::ui {

ScriptRunPane::ScriptRunPane(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  state_ = new QLabel(tr("No script run yet: Run a script… trains your own PyTorch script under capture and shows "
                         "its session live"));
  state_->setWordWrap(true);
  state_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  run_ = new QPushButton(tr("Run a script…"));
  stop_ = new QPushButton(tr("Stop"));
  stop_->setToolTip(tr("Stops the script as Ctrl-C would: it closes its session as \"stopped\". "
                       "Pressed again while it is stopping, kills it (the session keeps what was written)."));
  stop_->setEnabled(false);
  bar->addWidget(state_, 1);
  bar->addWidget(run_);
  bar->addWidget(stop_);
  layout->addLayout(bar);
  output_ = new QPlainTextEdit;
  output_->setObjectName(QStringLiteral("scriptOutput"));
  output_->setReadOnly(true);
  output_->setMaximumBlockCount(kKeptLines);
  // Wrapped: unwrapped, the view followed the end of the last long line to the right and
  // hid the short lines (a loss printed each step) to its left.
  output_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  output_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  output_->setPlaceholderText(tr("What the script prints appears here."));
  layout->addWidget(output_, 1);
  connect(run_, &QPushButton::clicked, this, &ScriptRunPane::runRequested);
  connect(stop_, &QPushButton::clicked, this, &ScriptRunPane::stopRequested);
}

void ScriptRunPane::showStarted(const QString& script_name, qint64 pid, const QString& session_path,
                                const QString& command_line) {
  output_->setPlainText(QStringLiteral("$ %1\n").arg(command_line));
  state_->setText(tr("%1 running (pid %2), recording to %3").arg(script_name).arg(pid).arg(session_path));
  run_->setEnabled(false);
  stop_->setEnabled(true);
}

void ScriptRunPane::appendOutput(const QString& text) {
  QScrollBar* bar = output_->verticalScrollBar();
  const bool at_end = bar->value() == bar->maximum();  // the user scrolled up: leave the view there
  output_->moveCursor(QTextCursor::End);
  output_->insertPlainText(text);
  if (at_end) bar->setValue(bar->maximum());
}

void ScriptRunPane::showStopping() {
  state_->setText(tr("Stopping: the script was interrupted as Ctrl-C does; Stop again kills it"));
}

void ScriptRunPane::showFinished(bool ok, const QString& summary) {
  state_->setText(ok ? summary : tr("Failed: %1").arg(summary));
  run_->setEnabled(true);
  stop_->setEnabled(false);
}

QString ScriptRunPane::stateText() const { return state_->text(); }

QString ScriptRunPane::outputText() const { return output_->toPlainText(); }

}  // namespace ampscope::ui
