#pragma once
// The application window: a thin shell that wires the training controller and
// the comparison page to the panes. In the middle, two tabs: the live plots and
// the precision comparison page. The run settings, the gradients, the op table
// and the kernels are dock widgets whose layout persists (QSettings).
#include <QMainWindow>
#include <QStringList>

#include "engine/config.h"
#include "engine/events.h"
#include "profiler/analysis/profile_snapshot.h"
#include "ui/widgets/file_loader.h"
#include "ui/widgets/script_runner.h"

class QAction;
class QMenu;
class QTabWidget;

namespace ampscope::ui {

class ComparisonPage;
class CompiledPane;
class FindingsPane;
class RunStatusBar;
class FileLoader;
class SessionFollower;
class GradientsPane;
class ReadinessPane;
class KernelView;
class LivePlots;
class OpExplorer;
class RanksPage;
class DiffWindow;
class ErrorBanner;
class RunFindings;
class RunPanel;
class ScriptRunPane;
class SessionIO;
class TrainingController;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  struct Options {
    bool restore_layout = true;  // off for screenshots and tests: the default layout, always
  };
  explicit MainWindow(Options options, QWidget* parent = nullptr);
  MainWindow() : MainWindow(Options{}) {}
  ~MainWindow() override;

  // Session files go through this (the profiler store); not owned; null: File→Open explains.
  void setSessionIO(SessionIO* io);
  // Opens a session or comparison file: read off the GUI thread (a progress note in
  // the status bar meanwhile), shown when read; fileOpened(path, ok) follows. false,
  // with the banner, when it cannot start (a run in progress, no session reader).
  bool openSession(const QString& path);
  // One file: openSession. Several: the ranks of a distributed run, compared on the
  // Ranks page; fileOpened(first path, ok) follows.
  bool openSessions(const QStringList& paths);
  // Writes the self-contained HTML report to `path` off the GUI thread: of the
  // comparison when its page is in front and has one, else of the session shown.
  // reportExported(path, ok) follows; false, with the banner, when there is nothing to report.
  bool exportReport(const QString& path);
  // Exports the same file (the comparison in front, else the session shown) as `ampscope export`
  // does (profiler::export_recorded_file), off the GUI thread; dataExported(target, ok) follows,
  // a failure in the banner. false, with the banner, when there is nothing to export.
  bool exportData(profiler::ExportFormat format, const QString& target);
  // Runs the user's own Python script under capture (`ampscope run`, a process of its
  // own): the Script pane shows its output, and the session it writes opens and is
  // followed live once it begins. false, with the banner, when it cannot start.
  bool runScript(const ScriptRunRequest& request);
  ScriptRunner* scriptRunner() const { return script_runner_; }
  ScriptRunPane* scriptRunPane() const { return script_pane_; }
  FileLoader* fileLoader() const { return file_loader_; }
  SessionFollower* sessionFollower() const { return follower_; }

  TrainingController* controller() const { return controller_; }
  RunPanel* runPanel() const { return run_panel_; }
  LivePlots* livePlots() const { return plots_; }
  OpExplorer* opExplorer() const { return op_explorer_; }
  KernelView* kernelView() const { return kernel_view_; }
  GradientsPane* gradientsPane() const { return gradients_; }
  ReadinessPane* readinessPane() const { return readiness_; }
  FindingsPane* findingsPane() const { return findings_; }
  RunFindings* runFindings() const { return run_findings_; }
  ComparisonPage* comparisonPage() const { return comparison_page_; }
  RanksPage* ranksPage() const { return ranks_page_; }
  // An eager and a compiled run of one model side by side, in a window of its own
  // (DiffWindow), read off the GUI thread; null until a comparison was shown.
  void compareEagerAndCompiled(const QString& eager_path, const QString& compiled_path);
  DiffWindow* diffWindow() const { return diff_window_; }
  // Brings the training plots or the comparison page to the front.
  void showTrainingPage();
  void showComparisonPage();
  bool comparisonPageShown() const;
  // The inline error banner's text; empty while hidden.
  QString bannerText() const;
  // The status bar's note of what the run's recording lost; empty while hidden.
  QString recordingStatusText() const;
  QAction* startAction() const { return start_action_; }

 signals:
  void fileOpened(const QString& path, bool ok);
  void reportExported(const QString& path, bool ok);
  void dataExported(const QString& target, bool ok);

 public slots:
  void startRun();
  void togglePause();
  void stopRun();
  void showError(const QString& title, const QString& message);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildDocks();
  void buildMenus();
  void buildStatusBar();
  void connectController();
  void onStateChanged(engine::RunState state, const QString& message);
  void onProfile(const profiler::ProfileSnapshotPtr& snapshot);
  void updateStatus();
  void updateRecentMenu();
  void addRecentFile(const QString& path);
  void openSessionDialog();
  void runScriptDialog();
  void onScriptFinished(bool ok, const QString& summary);
  void compareEagerAndCompiledDialog();
  void showDiff(const OpenedDiffPtr& diff);
  void saveSessionDialog();
  void exportPlotDialog();
  void exportReportDialog();
  void exportDataDialog();
  // The file File → Export writes from: the comparison's when its page is in front, else the
  // shown session's; empty (and `why_not` says why) when there is none yet.
  std::string exportSource(QString* why_not) const;
  void resetLayout();
  // The run panel shows the settings a session or comparison was recorded with.
  void applySavedConfig(const std::string& config_json);
  void showOpenedFile(const OpenedFilePtr& file);
  void setRecordingProblem(const QString& problem);
  // A recorded session's state in the status bar and the run panel, in place of the
  // built-in trainer's ("Finished — ready for a new run" beside "live" was two states).
  void showRecordedState();

  Options options_;
  SessionIO* session_io_ = nullptr;
  FileLoader* file_loader_ = nullptr;
  SessionFollower* follower_ = nullptr;  // a live session another process writes
  TrainingController* controller_ = nullptr;
  ScriptRunner* script_runner_ = nullptr;  // the user's script, run from File → Run a Python script
  ScriptRunPane* script_pane_ = nullptr;
  RunPanel* run_panel_ = nullptr;
  LivePlots* plots_ = nullptr;
  QTabWidget* pages_ = nullptr;  // the training plots and the comparison page
  ComparisonPage* comparison_page_ = nullptr;
  RanksPage* ranks_page_ = nullptr;
  DiffWindow* diff_window_ = nullptr;
  OpExplorer* op_explorer_ = nullptr;
  KernelView* kernel_view_ = nullptr;
  GradientsPane* gradients_ = nullptr;
  ReadinessPane* readiness_ = nullptr;
  CompiledPane* compiled_ = nullptr;
  FindingsPane* findings_ = nullptr;
  RunFindings* run_findings_ = nullptr;  // a built-in run's findings, so far and whole
  RunStatusBar* status_bar_ = nullptr;
  ErrorBanner* banner_ = nullptr;
  QString recorded_state_;  // "Recorded session: finished"; empty unless a recorded session is shown
  QMenu* recent_menu_ = nullptr;
  QMenu* view_menu_ = nullptr;
  QAction* start_action_ = nullptr;
  QAction* pause_action_ = nullptr;
  QAction* stop_action_ = nullptr;
  QByteArray default_state_;
};

}  // namespace ampscope::ui
