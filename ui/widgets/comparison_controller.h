#pragma once
// Runs a precision comparison (profiler::ComparisonRunner) on a worker thread
// and hands its progress and results to the GUI thread.
//
// Threads: the runner blocks its worker thread for the whole comparison; each
// training run has the engine's own thread. The worker never waits on the GUI:
// it posts through a GuiThreadInbox (thread_handoff.h), progress at most every
// kProgressIntervalMs (throttled at the source) and results once per finished run. Each post carries
// the generation of the comparison that made it; the GUI drops posts of an older
// generation, so a stopped comparison's late progress never reaches a newer one.
// Results cross threads as immutable snapshots (ComparisonResultsPtr).
#include <QMetaType>
#include <QObject>
#include <QString>
#include <memory>
#include <thread>

#include "profiler/compare/comparison_runner.h"
#include "profiler/report/report_data.h"
#include "ui/widgets/thread_handoff.h"

namespace ampscope::ui {

// A comparison as the page shows it: the report's data (the comparison, its
// per-variant summaries, the matched ops and the verdict), made off the GUI thread.
struct ComparisonResults {
  profiler::ReportData report;  // kind == kComparison; report.comparison is set
  QString path;                 // the comparison file; empty when none is kept
  bool complete = false;        // false while the comparison is still running
};
using ComparisonResultsPtr = std::shared_ptr<const ComparisonResults>;

ComparisonResultsPtr makeComparisonResults(profiler::Comparison comparison, const QString& path, bool complete);

struct ComparisonProgressInfo {
  QString variant;
  qint64 repeat = 0;  // 0-based; -1 for the profiled pass
  qint64 run_index = 0, run_count = 0;
  qint64 step = 0, steps = 0;
  double loss = 0.0;
  QString finished_message;  // set when a run ended
  // 0..1 over the whole comparison, counting the steps of the run in progress.
  double fraction() const;
};

class ComparisonController : public QObject {
  Q_OBJECT
 public:
  static constexpr int kProgressIntervalMs = 100;

  explicit ComparisonController(QObject* parent = nullptr);
  ~ComparisonController() override;  // stops the comparison and joins the worker

  // Starts a comparison; false (and failed()) while one is running. Invalid
  // settings are reported through failed() from the worker, before any run.
  bool start(profiler::ComparisonOptions options);
  // The comparison ends after the training step in progress; finished() follows.
  void stop();
  // For closing the window: stop and wait for the worker.
  void shutdown();
  bool isActive() const { return active_; }
  ComparisonResultsPtr results() const { return results_; }

 signals:
  void started(const QString& path);
  void progress(const ampscope::ui::ComparisonProgressInfo& progress);
  void resultsChanged(const ampscope::ui::ComparisonResultsPtr& results);
  // The worker is done: every run finished, or stopped() after a stop request.
  void finished(bool stopped);
  void failed(const QString& message);

 private:
  template <typename F>
  void post(uint64_t generation, F&& f);
  void joinWorker();

  GuiThreadInbox inbox_;
  std::thread worker_;  // joined in the destructor, before inbox_ goes
  std::shared_ptr<profiler::ComparisonRunner> runner_;
  uint64_t generation_ = 0;  // GUI thread only
  bool active_ = false;
  ComparisonResultsPtr results_;
};

}  // namespace ampscope::ui

Q_DECLARE_METATYPE(ampscope::ui::ComparisonProgressInfo)
Q_DECLARE_METATYPE(ampscope::ui::ComparisonResultsPtr)
