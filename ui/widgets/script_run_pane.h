#pragma once
// The Script pane: the user's own training script run from the GUI (ScriptRunner),
// what it printed as it runs, how it ended, and a Stop that stops it as Ctrl-C would.
// It only shows: the window owns the runner and opens the session the script writes.
#include <QString>
#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace ampscope::ui {

class ScriptRunPane : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kKeptLines = 20000;

  explicit ScriptRunPane(QWidget* parent = nullptr);

  // A run began: the command replaces the last run's output.
  void showStarted(const QString& script_name, qint64 pid, const QString& session_path,
                   const QString& command_line);
  void appendOutput(const QString& text);
  void showStopping();
  void showFinished(bool ok, const QString& summary);

  QString stateText() const;
  QString outputText() const;

 signals:
  void runRequested();   // "Run a script…"
  void stopRequested();  // "Stop"

 private:
  QLabel* state_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* stop_ = nullptr;
  QPlainTextEdit* output_ = nullptr;
};

}  // namespace ampscope::ui
