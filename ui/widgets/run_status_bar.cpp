#include "ui/widgets/run_status_bar.h"

#include <QApplication>
#include <QLabel>
#include <cmath>

#include "ui/models/formatting.h"
#include "ui/models/run_series.h"
#include "ui/widgets/training_controller.h"

namespace ampscope::ui {
namespace {

QString etaText(double seconds) {
  if (seconds <= 0 || !std::isfinite(seconds)) return QStringLiteral("—");
  if (seconds < 0.5) return QStringLiteral("< 1 s");  // steps left, not "0 s"
  const qint64 s = static_cast<qint64>(seconds + 0.5);
  if (s < 60) return QStringLiteral("%1 s").arg(s);
  if (s < 3600) return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60);
  return QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
}

QLabel* hiddenLabel(const char* object_name) {
  auto* l = new QLabel;
  l->setObjectName(QString::fromLatin1(object_name));
  l->hide();
  return l;
}

}  // namespace

RunStatusBar::RunStatusBar(QWidget* parent) : QStatusBar(parent) {
  auto permanent = [this](const QString& tip) {
    auto* l = new QLabel;
    l->setToolTip(tip);
    l->setContentsMargins(6, 0, 6, 0);
    addPermanentWidget(l);
    return l;
  };
  state_ = new QLabel;
  addWidget(state_, 1);
  recording_ = hiddenLabel("recordingStatus");
  recording_->setStyleSheet(QStringLiteral("color: #c62828; font-weight: bold"));
  recording_->setMaximumWidth(560);
  addWidget(recording_);
  live_ = hiddenLabel("liveStatus");
  addWidget(live_);
  busy_ = hiddenLabel("busyStatus");
  addWidget(busy_);
  step_ = permanent(tr("Completed optimizer steps"));
  speed_ = permanent(tr("Samples per second over the last steps"));
  eta_ = permanent(tr("Estimated time to the last step, from the recent step time"));
  device_ = permanent(tr("Where the run trains"));
  precision_ = permanent(glossary::formatDescription(profiler::FloatFormat::fp16) + QLatin1Char('\n') +
                         glossary::formatDescription(profiler::FloatFormat::bf16));
}

void RunStatusBar::setStateText(const QString& state) { state_->setText(state); }

void RunStatusBar::setRecordingProblem(const QString& problem) {
  recording_->setText(problem.isEmpty() ? QString() : tr("Recording: %1").arg(problem));
  recording_->setToolTip(problem);
  recording_->setVisible(!problem.isEmpty());
}

QString RunStatusBar::recordingProblemText() const { return recording_->isHidden() ? QString() : recording_->text(); }

void RunStatusBar::setLiveText(const QString& text) {
  live_->setText(text);
  live_->setVisible(!text.isEmpty());
}

void RunStatusBar::setBusy(bool busy, const QString& what) {
  busy_->setText(what);
  busy_->setVisible(busy);
  if (busy) QApplication::setOverrideCursor(Qt::BusyCursor);  // busy, not blocked: the window still answers
  else QApplication::restoreOverrideCursor();
}

void RunStatusBar::showRun(const RunSeries& series, const RunInfo& info, bool active) {
  const qint64 step = series.empty() ? 0 : series.last().step;
  step_->setText(info.total_steps > 0 ? tr("step %1 / %2").arg(step).arg(info.total_steps) : tr("step %1").arg(step));
  speed_->setText(tr("%1 samples/s").arg(formatCount(series.empty() ? NAN : series.last().samples_per_second)));
  const double eta =
      active ? static_cast<double>(info.total_steps - step) * series.recentStepTimeMs() / 1000.0 : 0.0;
  eta_->setText(tr("ETA %1").arg(active ? etaText(eta) : QStringLiteral("—")));
  device_->setText(info.device.isEmpty() ? tr("device —") : info.device);
  precision_->setText(info.precision.isEmpty() ? QStringLiteral("—") : info.precision);
}

}  // namespace ampscope::ui
