#pragma once
// The Findings pane of a run the window makes. A built-in run's: the report's findings read from
// the session it writes (profiler::session_findings, off the GUI thread through the FileLoader),
// every few seconds while it goes on ("so far, through step N") and whole when it ends. A read
// never waits for the run and the run never waits for a read; one read at a time. A precision
// comparison's: its verdict and each precision's recommendations (profiler::comparison_findings)
// as each of its runs ends, and whole at its end.
#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <functional>
#include <string>

#include "ui/widgets/comparison_controller.h"

class QTimer;

namespace ampscope::ui {

class FileLoader;
class FindingsPane;

class RunFindings : public QObject {
  Q_OBJECT
 public:
  static constexpr int kIntervalMs = 3000;
  // A read of a large session takes longer: the next waits at least this many times the last
  // read's time, so the loader thread stays mostly idle beside the run.
  static constexpr int kIdleFactor = 20;

  // shown_session: the session file the window shows (the run's own while it goes on);
  // run_active: whether the built-in run still goes on (running or paused).
  RunFindings(FileLoader* loader, FindingsPane* pane, std::function<std::string()> shown_session,
              std::function<bool()> run_active, QObject* parent = nullptr);

  void runStarted();  // a built-in run began: the pane says what comes, reads begin
  void runEnded();    // it ended: its whole session's findings are read once more
  void comparisonStarted();  // the comparison page began a run
  void comparisonResults(const ComparisonResultsPtr& results);  // of its runs ended so far, or all
  void setInterval(int ms);  // tests
  int interval() const;      // the wait before the next read, after the last read's time

 private:
  void readSoFar();
  void readDone();  // a so-far read came back (or failed): the next may be asked for
  bool stillShown(const QString& path, bool so_far) const;

  FileLoader* loader_;
  FindingsPane* pane_;
  std::function<std::string()> shown_session_;
  std::function<bool()> run_active_;
  QTimer* timer_ = nullptr;
  int base_interval_ = kIntervalMs;
  QElapsedTimer reading_;   // since the so-far read in hand was asked for
  bool following_ = false;  // a built-in run is on: its findings are this object's to show
  bool pending_ = false;    // a so-far read is in hand
};

}  // namespace ampscope::ui
