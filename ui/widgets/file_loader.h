#pragma once
// Opening a session or comparison file and writing a report, off the GUI thread
// (as hotspot loads): a file of millions of kernels takes seconds to read, and the
// window must keep painting and answering meanwhile.
//
// Threads: one worker (a SerialWorker, so jobs run in the order asked) reads
// through the SessionIO (the store's one session loader) and builds what the
// pages show; the result crosses to the GUI thread as an immutable snapshot
// through a GuiThreadInbox (thread_handoff.h says why not Qt's own hand-over). Each job carries a generation; a result of a job the user
// has since replaced (opened another file) is dropped. The destructor waits for
// the job in hand, so a result never reaches a destroyed receiver.
#include <QObject>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <memory>

#include "profiler/analysis/eager_vs_compiled.h"
#include "profiler/report/file_export.h"
#include "ui/models/session_io.h"
#include "ui/widgets/comparison_controller.h"
#include "ui/widgets/thread_handoff.h"

namespace ampscope::ui {

// What a file held, read and prepared for the pages.
struct OpenedFile {
  QString path;
  bool refresh = false;  // read again for a live view (refresh()), not opened by the user
  std::optional<LoadedSession> session;  // exactly one of the three is set
  ComparisonResultsPtr comparison;
  std::shared_ptr<const profiler::ReportData> ranks;  // several rank files (kind == kRanks)
};
using OpenedFilePtr = std::shared_ptr<const OpenedFile>;

// An eager and a compiled run of one model, compared (profiler::diff_sessions).
struct OpenedDiff {
  QString eager_path, compiled_path;
  profiler::EagerVsCompiled diff;
};
using OpenedDiffPtr = std::shared_ptr<const OpenedDiff>;

// The report's findings of a session file (profiler::session_findings), and the last step the
// file held when it was read: a run still going has more by the time they are shown.
struct ReadFindings {
  profiler::SessionFindings findings;
  int64_t last_step = 0;
};
using FindingsPtr = std::shared_ptr<const ReadFindings>;

class FileLoader : public QObject {
  Q_OBJECT
 public:
  explicit FileLoader(QObject* parent = nullptr);
  ~FileLoader() override;

  void setSessionIO(SessionIO* io) { io_ = io; }
  // Starts reading `path`; opened() or openFailed() follows. A later open() replaces it.
  // false (and nothing follows) when there is no SessionIO.
  bool open(const QString& path);
  // The same, quietly (no busy note): a followed live session read again.
  bool refresh(const QString& path);
  // The session files of a distributed run's ranks, compared (profiler::rank_report);
  // opened() with `ranks` set (its path: the first file) or openFailed() follows.
  bool openRanks(const QStringList& paths);
  // Reads two sessions, an eager and a compiled run of one model, and compares them;
  // diffOpened() or diffFailed() follows. Leaves the open file alone.
  void openDiff(const QString& eager_path, const QString& compiled_path);
  // Starts writing the HTML report of `source` (a session or comparison file) to
  // `path`; reportWritten() or reportFailed() follows.
  void writeReport(const QString& source, const QString& path);
  // Starts exporting `source` (profiler::export_recorded_file: a trace, CSV tables, a JSON
  // summary, TensorBoard events) to `target`; exportWritten() or exportFailed() follows.
  void writeExport(const QString& source, profiler::ExportFormat format, const QString& target);
  // Reads the findings of the session file at `path` (a built-in run's); findingsRead() or
  // findingsFailed() follows, with `so_far`. so_far: the run is still writing it, and it is read
  // quietly (no busy note: it is read again every few seconds). Leaves the open file alone.
  void readFindings(const QString& path, bool so_far = false);
  bool isBusy() const { return busy_ > 0; }
  // Waits for the jobs in hand (tests, shutdown); their results are still posted.
  void waitForDone();

 signals:
  void busyChanged(bool busy, const QString& what);
  void opened(const ampscope::ui::OpenedFilePtr& file);
  void openFailed(const QString& path, const QString& message, bool refresh);  // message: one line
  void diffOpened(const ampscope::ui::OpenedDiffPtr& diff);
  void diffFailed(const QString& message);  // one line
  void reportWritten(const QString& path);
  void reportFailed(const QString& path, const QString& message);
  void exportWritten(const QString& target, const QString& what);  // what: "wrote ..." (one line)
  void exportFailed(const QString& target, const QString& message);  // message: one line
  void findingsRead(const QString& path, const ampscope::ui::FindingsPtr& findings, bool so_far);
  void findingsFailed(const QString& path, const QString& message, bool so_far);  // message: one line

 private:
  template <typename Done, typename F>
  void post(uint64_t generation, Done done, F&& f);
  bool start(const QString& path, bool refresh);
  void begin(const QString& what);
  void end();

  SessionIO* io_ = nullptr;
  GuiThreadInbox inbox_;
  SerialWorker worker_;  // after inbox_: destroyed (joined) first, so every job may still deliver
  uint64_t open_generation_ = 0;  // GUI thread: the newest open()
  int busy_ = 0;                   // GUI thread: jobs started and not yet delivered, refreshes not counted
};

}  // namespace ampscope::ui

Q_DECLARE_METATYPE(ampscope::ui::OpenedFilePtr)
Q_DECLARE_METATYPE(ampscope::ui::OpenedDiffPtr)
Q_DECLARE_METATYPE(ampscope::ui::FindingsPtr)
