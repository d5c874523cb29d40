#pragma once
// The main window's status bar: the run's state, what the recording lost (never
// silent), a live session another process writes, the loader's work, and the
// run's step, speed, ETA, device and precision. One class, so the window only
// says what happened.
#include <QStatusBar>
#include <QString>

class QLabel;

namespace ampscope::ui {

class RunSeries;
struct RunInfo;

class RunStatusBar : public QStatusBar {
  Q_OBJECT
 public:
  explicit RunStatusBar(QWidget* parent = nullptr);

  void setStateText(const QString& state);
  // A dropped batch, a failed session write (a full disk): "" hides it.
  void setRecordingProblem(const QString& problem);
  QString recordingProblemText() const;  // "" while hidden
  // "Following x.ampscope: step 40" while another process records the shown session.
  void setLiveText(const QString& text);
  // "Opening x.ampscope…" while the file loader works; a busy cursor meanwhile.
  void setBusy(bool busy, const QString& what);
  // Step, samples/s, ETA (while `active`), device and precision of the run shown.
  void showRun(const RunSeries& series, const RunInfo& info, bool active);

 private:
  QLabel* state_ = nullptr;
  QLabel* recording_ = nullptr;
  QLabel* live_ = nullptr;
  QLabel* busy_ = nullptr;
  QLabel* step_ = nullptr;
  QLabel* speed_ = nullptr;
  QLabel* eta_ = nullptr;
  QLabel* device_ = nullptr;
  QLabel* precision_ = nullptr;
};

}  // namespace ampscope::ui
