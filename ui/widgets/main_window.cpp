#include "ui/widgets/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "engine/config_json.h"
#include "profiler/process_identity.h"
#include "profiler/report/report_format.h"
#include "ui/widgets/comparison_page.h"
#include "ui/widgets/compiled_pane.h"
#include "ui/widgets/diff_window.h"
#include "ui/widgets/error_banner.h"
#include "ui/widgets/export_dialog.h"
#include "ui/widgets/findings_pane.h"
#include "ui/models/formatting.h"
#include "ui/models/session_io.h"
#include "ui/widgets/gradients_pane.h"
#include "ui/widgets/readiness_pane.h"
#include "ui/widgets/kernel_view.h"
#include "ui/widgets/live_plots.h"
#include "ui/widgets/op_explorer.h"
#include "ui/widgets/ranks_page.h"
#include "ui/widgets/run_findings.h"
#include "ui/widgets/run_panel.h"
#include "ui/widgets/run_status_bar.h"
#include "ui/widgets/script_run_dialog.h"
#include "ui/widgets/script_run_pane.h"
#include "ui/widgets/session_follower.h"
#include "ui/widgets/training_controller.h"

namespace ampscope::ui {

using engine::RunState;

namespace {

constexpr int kMaxRecentFiles = 8;
constexpr char kRecentKey[] = "recentFiles";
constexpr char kGeometryKey[] = "window/geometry";
constexpr char kStateKey[] = "window/state";
// Bump when docks are added or renamed so an old saved layout is not applied.
constexpr int kLayoutVersion = 2;

// A run whose steps have no gradient norm (a script that does not clip) shows its range
// samples' instead, at their steps; FSDP's samples are the rank's shards, and say so.
void showSampledGradNorms(LivePlots& plots, const LoadedSession& session) {
  QVector<double> steps, norms;
  const bool steps_have_norm = std::any_of(session.steps.begin(), session.steps.end(),
                                           [](const profiler::StepRecord& s) { return std::isfinite(s.grad_norm); });
  for (const profiler::SampledGradientNorm& g : session.sampled_gradient_norms) {
    if (steps_have_norm || !std::isfinite(g.norm)) continue;
    steps << static_cast<double>(g.step);
    norms << g.norm;
  }
  const bool sharded = session.script && session.script->sharded_parameters > 0;
  plots.setSampledGradNorms(steps, norms,
                            sharded ? QObject::tr("this rank's shards, at range-sampled steps")
                                    : QObject::tr("at range-sampled steps only"));
}

}  // namespace

MainWindow::MainWindow(Options options, QWidget* parent) : QMainWindow(parent), options_(options) {
  setWindowTitle(tr("ampscope"));
  setAcceptDrops(true);
  setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);
  setTabPosition(Qt::AllDockWidgetAreas, QTabWidget::North);
  controller_ = new TrainingController(this);
  script_runner_ = new ScriptRunner(this);
  file_loader_ = new FileLoader(this);
  connect(file_loader_, &FileLoader::opened, this, &MainWindow::showOpenedFile);
  connect(file_loader_, &FileLoader::openFailed, this,
          [this](const QString& path, const QString& message, bool refresh) {
            // A live session read while its writer checkpoints can fail once: tried again at its next change.
            if (refresh) return follower_->reloaded(path, false);
            showError(tr("Cannot open %1").arg(QFileInfo(path).fileName()), message);
            emit fileOpened(path, false);
          });
  follower_ = new SessionFollower(this);
  connect(follower_, &SessionFollower::reloadWanted, file_loader_, &FileLoader::refresh);
  connect(file_loader_, &FileLoader::reportWritten, this, [this](const QString& path) {
    statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
    emit reportExported(path, true);
  });
  connect(file_loader_, &FileLoader::diffOpened, this, &MainWindow::showDiff);
  connect(file_loader_, &FileLoader::diffFailed, this, [this](const QString& message) {
    showError(tr("Cannot compare the runs"), message);
  });
  connect(file_loader_, &FileLoader::exportWritten, this, [this](const QString& target, const QString& what) {
    statusBar()->showMessage(what, 10000);
    emit dataExported(target, true);
  });
  connect(file_loader_, &FileLoader::exportFailed, this, [this](const QString& target, const QString& message) {
    showError(tr("Cannot export"), message);
    emit dataExported(target, false);
  });
  connect(file_loader_, &FileLoader::reportFailed, this, [this](const QString& path, const QString& message) {
    showError(tr("Cannot write the report"), message);
    emit reportExported(path, false);
  });

  auto* center = new QWidget;
  auto* center_layout = new QVBoxLayout(center);
  center_layout->setContentsMargins(0, 0, 0, 0);
  center_layout->setSpacing(0);
  banner_ = new ErrorBanner;
  plots_ = new LivePlots;
  plots_->setSeries(&controller_->series());
  comparison_page_ = new ComparisonPage;
  pages_ = new QTabWidget;
  pages_->setObjectName(QStringLiteral("pages"));
  pages_->setDocumentMode(true);
  pages_->addTab(plots_, tr("Training"));
  pages_->addTab(comparison_page_, tr("Precision comparison"));
  pages_->setTabToolTip(1, tr("FP32 vs TF32 vs FP16 vs BF16: the Run panel's training in each precision, "
                              "repeated, with speedups, per-op times and loss curves"));
  ranks_page_ = new RanksPage;
  pages_->addTab(ranks_page_, tr("Ranks"));
  pages_->setTabToolTip(2, tr("The ranks of a distributed run side by side: stragglers, loss-scale agreement, "
                              "skipped steps and collectives (open several FILE.rank<R>.ampscope files)"));
  pages_->setTabVisible(2, false);  // until rank files are opened
  center_layout->addWidget(banner_);
  center_layout->addWidget(pages_, 1);
  setCentralWidget(center);

  buildDocks();
  buildMenus();
  buildStatusBar();
  connectController();
  resize(1600, 1000);
  default_state_ = saveState(kLayoutVersion);
  if (options_.restore_layout) {
    QSettings settings;
    restoreGeometry(settings.value(kGeometryKey).toByteArray());
    restoreState(settings.value(kStateKey).toByteArray(), kLayoutVersion);
  }
  onStateChanged(RunState::kIdle, {});
}

MainWindow::~MainWindow() = default;

void MainWindow::setRecordingProblem(const QString& problem) { status_bar_->setRecordingProblem(problem); }

void MainWindow::buildDocks() {
  auto dock = [this](const QString& title, const QString& name, QWidget* widget) {
    auto* d = new QDockWidget(title, this);
    d->setObjectName(name);  // saveState() keys docks by object name
    d->setWidget(widget);
    d->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                   QDockWidget::DockWidgetClosable);
    return d;
  };
  run_panel_ = new RunPanel;
  QDockWidget* run = dock(tr("Run"), QStringLiteral("runDock"), run_panel_);
  addDockWidget(Qt::LeftDockWidgetArea, run);

  gradients_ = new GradientsPane;
  op_explorer_ = new OpExplorer;
  kernel_view_ = new KernelView;
  readiness_ = new ReadinessPane;
  compiled_ = new CompiledPane;
  findings_ = new FindingsPane;
  run_findings_ = new RunFindings(
      file_loader_, findings_, [this] { return session_io_ ? session_io_->shownSessionPath() : std::string(); },
      [this] { return controller_->isActive(); }, this);
  QDockWidget* findings = dock(tr("Findings"), QStringLiteral("findingsDock"), findings_);
  QDockWidget* grads = dock(tr("Gradients"), QStringLiteral("gradientsDock"), gradients_);
  QDockWidget* readiness = dock(tr("Precision readiness"), QStringLiteral("readinessDock"), readiness_);
  QDockWidget* ops = dock(tr("Ops"), QStringLiteral("opsDock"), op_explorer_);
  QDockWidget* kernels = dock(tr("Kernels"), QStringLiteral("kernelsDock"), kernel_view_);
  QDockWidget* compiled = dock(tr("Compiled code"), QStringLiteral("compiledDock"), compiled_);
  script_pane_ = new ScriptRunPane;
  QDockWidget* script = dock(tr("Script"), QStringLiteral("scriptDock"), script_pane_);
  addDockWidget(Qt::BottomDockWidgetArea, ops);
  tabifyDockWidget(ops, findings);
  tabifyDockWidget(findings, kernels);
  tabifyDockWidget(kernels, grads);
  tabifyDockWidget(grads, readiness);
  tabifyDockWidget(readiness, compiled);
  tabifyDockWidget(compiled, script);
  ops->raise();
  resizeDocks({run}, {330}, Qt::Horizontal);
  resizeDocks({ops}, {300}, Qt::Vertical);
  setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open session…"), this, &MainWindow::openSessionDialog);
  open->setShortcut(QKeySequence::Open);
  QAction* save = file->addAction(tr("&Save session as…"), this, &MainWindow::saveSessionDialog);
  save->setShortcut(QKeySequence::SaveAs);
  recent_menu_ = file->addMenu(tr("Open &recent"));
  updateRecentMenu();
  file->addSeparator();
  QAction* run_script = file->addAction(tr("Run a Python &script…"), this, &MainWindow::runScriptDialog);
  run_script->setShortcut(Qt::CTRL | Qt::SHIFT | Qt::Key_R);
  run_script->setToolTip(tr("Your own training script, unmodified, under capture (ampscope run): its session "
                            "opens here and follows the run live"));
  file->addAction(tr("Compare &eager and compiled runs…"), this, &MainWindow::compareEagerAndCompiledDialog);
  QAction* export_plot = file->addAction(tr("&Export plots…"), this, &MainWindow::exportPlotDialog);
  export_plot->setShortcut(Qt::CTRL | Qt::Key_E);
  QAction* report = file->addAction(tr("Export HTML &report…"), this, &MainWindow::exportReportDialog);
  file->addAction(tr("Export &data (trace, CSV, JSON, TensorBoard)…"), this, &MainWindow::exportDataDialog);
  report->setShortcut(Qt::CTRL | Qt::Key_R);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  start_action_ = run->addAction(tr("&Start"), this, &MainWindow::startRun);
  start_action_->setShortcut(Qt::Key_F5);
  QAction* compare = run->addAction(tr("&Compare precisions…"), this, &MainWindow::showComparisonPage);
  compare->setShortcut(Qt::CTRL | Qt::Key_K);
  pause_action_ = run->addAction(tr("&Pause"), this, &MainWindow::togglePause);
  pause_action_->setShortcut(Qt::Key_F6);
  stop_action_ = run->addAction(tr("S&top"), this, &MainWindow::stopRun);
  stop_action_->setShortcut(Qt::SHIFT | Qt::Key_F5);

  view_menu_ = menuBar()->addMenu(tr("&View"));
  for (QDockWidget* d : findChildren<QDockWidget*>()) view_menu_->addAction(d->toggleViewAction());
  view_menu_->addSeparator();
  QAction* follow =
      view_menu_->addAction(tr("&Follow latest step"), plots_, &LivePlots::followLatest);
  follow->setShortcut(Qt::Key_Home);
  view_menu_->addAction(tr("&Reset layout"), this, &MainWindow::resetLayout);

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Mixed-precision terms"), this, [this] {
    QMessageBox::information(this, tr("Mixed-precision terms"), glossary::allTerms());
  });
  help->addAction(tr("&About ampscope"), this, [this] {
    QMessageBox::about(this, tr("About ampscope"),
                       tr("<b>ampscope</b> — see what mixed-precision training actually did.<br>"
                          "LibTorch training with live loss, loss scale, gradients, op and kernel "
                          "profiles."));
  });
}

void MainWindow::buildStatusBar() {
  status_bar_ = new RunStatusBar;
  setStatusBar(status_bar_);
  connect(follower_, &SessionFollower::statusChanged, this, [this](const QString& text) {
    status_bar_->setLiveText(text);
    showRecordedState();
  });
  connect(file_loader_, &FileLoader::busyChanged, status_bar_, &RunStatusBar::setBusy);
}

void MainWindow::connectController() {
  connect(run_panel_, &RunPanel::startRequested, this, &MainWindow::startRun);
  connect(run_panel_, &RunPanel::pauseRequested, controller_, &TrainingController::pause);
  connect(run_panel_, &RunPanel::resumeRequested, controller_, &TrainingController::resume);
  connect(run_panel_, &RunPanel::stopRequested, controller_, &TrainingController::stop);
  connect(controller_, &TrainingController::seriesReset, plots_, &LivePlots::resetData);
  connect(controller_, &TrainingController::stepsAppended, plots_, &LivePlots::appendSteps);
  connect(controller_, &TrainingController::stepsAppended, this, &MainWindow::updateStatus);
  connect(controller_, &TrainingController::stateChanged, this, &MainWindow::onStateChanged);
  connect(controller_, &TrainingController::profileUpdated, this, &MainWindow::onProfile);
  connect(controller_, &TrainingController::recordingProblemChanged, this, &MainWindow::setRecordingProblem);
  connect(controller_, &TrainingController::runStarted, this, [this](const RunInfo& info) {
    plots_->setScalerEnabled(info.scaler_enabled);
    plots_->setMemoryKind(profiler::memory_kind(info.device.toStdString()));
    gradients_->setRunPrecision(info.precision);
    plots_->setStepTimingNote(info.step_timing);
    plots_->setMemoryNote(info.memory_peak);
    plots_->setLearningRateNote(info.scheduler_drift);
    if (info.source == QLatin1String("live")) {
      compiled_->clear();  // the built-in trainer compiles nothing
      run_findings_->runStarted();
    }
    // A recorded session's title names its file too, and keeps it when a followed session is
    // read again (the re-read shows the run again, through this same signal).
    QStringList described{info.model, info.precision, info.device};
    described.removeAll(QString());  // a session that did not record its device
    const QString run = described.join(QStringLiteral(" · "));
    setWindowTitle(info.source == QLatin1String("live")
                       ? tr("ampscope — %1").arg(run)
                       : tr("ampscope — %1 — %2").arg(QFileInfo(info.source).fileName(), run));
    updateStatus();
  });
  connect(controller_, &TrainingController::runFailed, this,
          [this](const QString& message) { showError(tr("The run failed"), message); });

  connect(script_pane_, &ScriptRunPane::runRequested, this, &MainWindow::runScriptDialog);
  connect(script_pane_, &ScriptRunPane::stopRequested, this, &MainWindow::stopRun);
  connect(script_runner_, &ScriptRunner::started, this, [this](const QString& command_line) {
    const QStringList files = script_runner_->request().sessionPaths();
    const QString written = files.size() == 1 ? files.front()
                                              : tr("%1 … %2 (a file per rank)")
                                                    .arg(files.front(), QFileInfo(files.back()).fileName());
    script_pane_->showStarted(script_runner_->scriptName(), script_runner_->pid(), written, command_line);
  });
  connect(script_runner_, &ScriptRunner::outputAppended, script_pane_, &ScriptRunPane::appendOutput);
  connect(script_runner_, &ScriptRunner::sessionStarted, this, [this](const QString& path) {
    // Unless a built-in run or comparison holds the window (started before the script's
    // session began): the script goes on, and its session can be opened when that ends.
    if (!controller_->isActive() && !comparison_page_->isRunning()) openSession(path);
  });
  connect(script_runner_, &ScriptRunner::finished, this, &MainWindow::onScriptFinished);

  connect(ranks_page_, &RanksPage::rankSessionRequested, this, &MainWindow::openSession);
  comparison_page_->setBaseConfigSource([this] { return run_panel_->config(); });
  connect(comparison_page_, &ComparisonPage::errorOccurred, this, &MainWindow::showError);
  connect(comparison_page_, &ComparisonPage::reportRequested, this, &MainWindow::exportReportDialog);
  connect(comparison_page_, &ComparisonPage::comparisonWritten, this, &MainWindow::addRecentFile);
  connect(comparison_page_, &ComparisonPage::scriptComparisonRequested, this, &MainWindow::runScript);
  connect(comparison_page_, &ComparisonPage::scriptStopRequested, this, &MainWindow::stopRun);
  connect(run_panel_, &RunPanel::rerunScriptRequested, this, [this] {
    const std::optional<profiler::ScriptFacts>& facts = run_panel_->shownScriptFacts();
    const std::optional<ScriptRunRequest> rerun = facts ? ScriptRunDialog::rerunRequest(*facts) : std::nullopt;
    if (!rerun) return;  // the button is off where the file does not say how the script ran
    if (const std::optional<ScriptRunRequest> asked = ScriptRunDialog::ask(this, rerun)) runScript(*asked);
  });
  connect(comparison_page_, &ComparisonPage::runResultsShown, run_findings_, &RunFindings::comparisonResults);
  connect(comparison_page_, &ComparisonPage::runningChanged, this, [this](bool running) {
    if (running) banner_->hide();
    if (running && !script_runner_->isRunning()) run_findings_->comparisonStarted();
    onStateChanged(controller_->state(), {});
  });
}

void MainWindow::showTrainingPage() { pages_->setCurrentWidget(plots_); }

void MainWindow::showComparisonPage() { pages_->setCurrentWidget(comparison_page_); }

bool MainWindow::comparisonPageShown() const { return pages_->currentWidget() == comparison_page_; }

void MainWindow::startRun() {
  if (comparison_page_->isRunning()) {
    showError(tr("Cannot start a run"), tr("a precision comparison is running; stop it first"));
    return;
  }
  if (script_runner_->isRunning()) {
    showError(tr("Cannot start a run"), tr("%1 is running; stop it first").arg(script_runner_->scriptName()));
    return;
  }
  banner_->hide();
  recorded_state_.clear();  // the state texts follow the new run
  plots_->setGradNormAbsence(tr("no finite gradient norm yet"));
  follower_->stop();  // the window shows the new run now
  showTrainingPage();
  controller_->start(run_panel_->config());
}

void MainWindow::togglePause() {
  if (controller_->state() == RunState::kRunning && !controller_->pausePending())
    controller_->pause();
  else
    controller_->resume();
}

void MainWindow::stopRun() {
  if (!script_runner_->isRunning()) return controller_->stop();
  script_runner_->stop();
  if (script_runner_->isRunning()) script_pane_->showStopping();
}

bool MainWindow::runScript(const ScriptRunRequest& request) {
  QString why = tr("a run is in progress; stop it first");
  if (controller_->isActive() || comparison_page_->isRunning() || !script_runner_->start(request, &why)) {
    showError(tr("Cannot run the script"), why);
    return false;
  }
  banner_->hide();
  for (QDockWidget* d : findChildren<QDockWidget*>())
    if (d->widget() == script_pane_) d->raise();
  onStateChanged(controller_->state(), {});
  return true;
}

void MainWindow::runScriptDialog() {
  if (const std::optional<ScriptRunRequest> request = ScriptRunDialog::ask(this)) runScript(*request);
}

void MainWindow::onScriptFinished(bool ok, const QString& summary) {
  script_pane_->showFinished(ok, summary);
  onStateChanged(controller_->state(), {});
  // A comparison's file is read once more, whole: its last runs and its end (a file this run
  // did not begin is another's, left as it was).
  const ScriptRunRequest& request = script_runner_->request();
  const bool window_free = script_runner_->sessionSeen() && !controller_->isActive() && !comparison_page_->isRunning();
  if (request.comparing() && window_free) openSession(request.session_path);
  // torchrun's ranks, side by side (the Ranks page), once all have ended: those that wrote a file.
  if (const QStringList paths = request.sessionPaths(); paths.size() > 1 && window_free) {
    QStringList ranks;
    for (const QString& path : paths)
      if (QFileInfo::exists(path)) ranks << path;
    if (ranks.size() > 1) openSessions(ranks);
  }
  if (ok) return statusBar()->showMessage(summary, 10000);
  if (!file_loader_->isBusy()) return showError(tr("The script's run"), summary);
  // Its session is still being read (a script that failed before the first poll saw it):
  // showing a file clears the banner, so it is shown after.
  auto* once = new QObject(this);
  connect(this, &MainWindow::fileOpened, once, [this, once, summary] {
    showError(tr("The script's run"), summary);
    once->deleteLater();
  });
}

void MainWindow::showError(const QString& title, const QString& message) {
  banner_->showError(title, message);
  statusBar()->showMessage(title + QStringLiteral(": ") + message, 10000);
}

QString MainWindow::recordingStatusText() const {
  return status_bar_->recordingProblemText();
}

QString MainWindow::bannerText() const { return banner_->text(); }

void MainWindow::onStateChanged(RunState state, const QString& message) {
  run_panel_->setRunState(state, controller_->pausePending());
  const bool active = state == RunState::kRunning || state == RunState::kPaused;
  const bool script = script_runner_->isRunning();
  // A comparison beside a script's training would time both on a shared device.
  comparison_page_->setTrainingActive(active || script);
  comparison_page_->setScriptComparisonRunning(script && script_runner_->request().comparing(),
                                               script_runner_->scriptName());
  start_action_->setEnabled(!active && !comparison_page_->isRunning() && !script);
  pause_action_->setEnabled(active);
  pause_action_->setText(state == RunState::kPaused ? tr("&Resume") : tr("&Pause"));
  stop_action_->setEnabled(active || script);
  status_bar_->setStateText(runStateLabel(state));
  if (engine::is_terminal(state)) run_findings_->runEnded();  // a built-in run's: read whole
  showRecordedState();
  updateStatus();
}

void MainWindow::showRecordedState() {
  if (recorded_state_.isEmpty() || controller_->isActive()) return;
  const QString state = follower_->isFollowing() ? tr("Live session: another process records it") : recorded_state_;
  status_bar_->setStateText(state);
  run_panel_->setSessionState(tr("%1 — Start begins a built-in run").arg(state));
}

void MainWindow::onProfile(const profiler::ProfileSnapshotPtr& snapshot) {
  op_explorer_->setSnapshot(snapshot);
  kernel_view_->setSnapshot(snapshot);
  gradients_->setSnapshot(snapshot);
  readiness_->setSnapshot(snapshot);
}

void MainWindow::updateStatus() {
  status_bar_->showRun(controller_->series(), controller_->runInfo(), controller_->isActive());
}

void MainWindow::setSessionIO(SessionIO* io) {
  session_io_ = io;
  file_loader_->setSessionIO(io);
}

bool MainWindow::openSession(const QString& path) {
  if (controller_->isActive() || comparison_page_->isRunning()) {
    showError(tr("Cannot open a session"), tr("a run is in progress; stop it first"));
    return false;
  }
  follower_->stop();  // a followed file's next read would replace this one
  if (!file_loader_->open(path)) {
    showError(tr("Cannot open %1").arg(QFileInfo(path).fileName()),
              tr("this build has no session reader (the profiler store is not attached)"));
    return false;
  }
  return true;
}

bool MainWindow::openSessions(const QStringList& paths) {
  if (paths.size() == 1) return openSession(paths.front());
  if (paths.isEmpty()) return false;
  if (controller_->isActive() || comparison_page_->isRunning()) {
    showError(tr("Cannot open the ranks"), tr("a run is in progress; stop it first"));
    return false;
  }
  follower_->stop();
  return file_loader_->openRanks(paths);
}

void MainWindow::showOpenedFile(const OpenedFilePtr& file) {
  const QString& path = file->path;
  // A run may have started while the file was read: the run keeps the window.
  if (controller_->isActive() || comparison_page_->isRunning()) {
    if (file->refresh) return follower_->stop();
    showError(tr("Cannot show %1").arg(QFileInfo(path).fileName()),
              tr("a run started while it was read; open it again when the run ends"));
    emit fileOpened(path, false);
    return;
  }
  if (file->ranks || file->comparison) recorded_state_.clear();
  if (file->ranks) {
    follower_->stop();
    ranks_page_->showRanks(file->ranks);
    findings_->showNote(tr("A distributed run's ranks, compared on the Ranks page: open one rank's session "
                           "(double-click its row) for its findings."));
    pages_->setTabVisible(pages_->indexOf(ranks_page_), true);
    pages_->setCurrentWidget(ranks_page_);
    setWindowTitle(tr("ampscope — %1 ranks").arg(file->ranks->ranks->ranks.size()));
    banner_->hide();
    emit fileOpened(path, true);
    return;
  }
  if (file->comparison) {
    // A script's comparison (`ampscope run --compare` from File → Run a Python script) is
    // followed while it runs: the page fills in as each of its runs ends.
    const bool written_live = script_runner_->isRunning() && script_runner_->request().comparing() &&
                              script_runner_->request().session_path == path;
    if (!comparison_page_->showOpenedComparison(file->comparison, written_live)) {  // the page showed why
      follower_->stop();
      emit fileOpened(path, false);
      return;
    }
    findings_->setFindings(profiler::comparison_findings(file->comparison->report),
                           written_live ? tr("So far: the script's comparison goes on, and these are of the runs "
                                             "that ended.")
                                        : QString());
    // A script's comparison shows the script beside it, not the built-in run's settings.
    const std::optional<profiler::ScriptFacts>& script = file->comparison->report.comparison->script;
    if (script) run_panel_->showScriptFacts(*script);
    if (file->refresh) return follower_->reloaded(path, !written_live);  // the page and title stay
    follower_->stop();
    if (written_live)
      follower_->follow(path, false, script_runner_->pid(), QString::fromStdString(profiler::current_host_name()));
    if (!script) {
      run_panel_->showSettings();
      applySavedConfig(file->comparison->report.meta.config_json);
    }
    showComparisonPage();
    setWindowTitle(tr("ampscope — %1").arg(QFileInfo(path).fileName()));
  } else {
    const LoadedSession& session = *file->session;
    RunInfo info = RunInfo::describing(session.meta);
    // A script's: what its model computed in, where no autocast region says it (FSDP's
    // mixed precision, a bf16 model), not "fp32".
    if (session.script) info.precision = QString::fromStdString(session.script->compute_precision());
    info.total_steps = session.steps.empty() ? 0 : session.steps.back().step;
    info.source = path;
    if (session.step_timing.any_recorded())
      info.step_timing = QString::fromStdString(profiler::report_detail::step_timing_text(session.step_timing));
    if (session.memory_peak.raised_by_samples())
      info.memory_peak = QString::fromStdString(
          std::string(profiler::peak_memory_name(profiler::memory_kind(session.meta.device))) + " " +
          profiler::report_detail::memory_peak_text(session.memory_peak));
    QStringList drifting;
    for (const profiler::SchedulerSummary& s : session.schedulers)
      if (s.drifts()) drifting << QString::fromStdString(profiler::scheduler_drift_text(s));
    info.scheduler_drift = drifting.join(QLatin1Char('\n'));
    recorded_state_ = session.health.closed ? tr("Recorded session: %1").arg(QString::fromStdString(session.final_state))
                                            : tr("Recorded session: not closed");
    if (session.script) {
      run_panel_->showScriptFacts(*session.script);
      // On two lines: one would be wider than the plot.
      plots_->setGradNormAbsence(session.script->grad_norm_measured
                                     ? tr("no finite gradient norm in this session")
                                     : tr("no gradient norm: the script does not clip gradients,\n"
                                          "and no step was range-sampled"));
    } else {
      run_panel_->showSettings();
      plots_->setGradNormAbsence(tr("no finite gradient norm in this session"));
    }
    controller_->showRecorded(info, session.steps, session.profile, session.optimizer_steps, session.health);
    showSampledGradNorms(*plots_, session);
    // A session not closed yet is most often one a script still writes: it is read again as it grows.
    findings_->setFindings(session.findings, session.health.closed
                                                 ? QString()
                                                 : tr("So far, through step %1: the session is not closed (its run "
                                                      "goes on, or ended without closing it).")
                                                       .arg(info.total_steps));
    compiled_->setCompileEvents(session.compile);
    showRecordedState();
    if (file->refresh) {
      follower_->reloaded(path, session.health.closed);
      return;  // the same file, newer: title, recent files and the run panel stay
    }
    // A session whose run has not ended (another process still writing it) is followed.
    follower_->follow(path, session.health.closed, session.writer_pid, QString::fromStdString(session.writer_host));
    applySavedConfig(session.meta.config_json);
    if (!session.script) {
      // What was profiled, too: Start runs the session again as it was recorded.
      profiler::CaptureSettings capture = run_panel_->captureSettings();
      if (capture.read_meta(session.meta_values)) run_panel_->setCaptureSettings(capture);
    }
    showTrainingPage();  // the title was set as the session was shown (runStarted)
  }
  banner_->hide();
  addRecentFile(path);
  emit fileOpened(path, true);
}

void MainWindow::openSessionDialog() {
  const QStringList paths = QFileDialog::getOpenFileNames(
      this, tr("Open session (several: the ranks of a distributed run)"), {},
      tr("ampscope sessions (*.%1);;All files (*)").arg(kSessionSuffix));
  if (!paths.isEmpty()) openSessions(paths);
}

void MainWindow::compareEagerAndCompiledDialog() {
  const QString filter = tr("ampscope sessions (*.%1);;All files (*)").arg(kSessionSuffix);
  const QString eager = QFileDialog::getOpenFileName(this, tr("The eager run's session"), {}, filter);
  if (eager.isEmpty()) return;
  const QString compiled = QFileDialog::getOpenFileName(this, tr("The compiled run's session"), {}, filter);
  if (!compiled.isEmpty()) compareEagerAndCompiled(eager, compiled);
}

void MainWindow::compareEagerAndCompiled(const QString& eager_path, const QString& compiled_path) {
  file_loader_->openDiff(eager_path, compiled_path);
}

void MainWindow::showDiff(const OpenedDiffPtr& opened) {
  if (!diff_window_) diff_window_ = new DiffWindow(this);
  diff_window_->setDiff(opened->diff, opened->eager_path, opened->compiled_path);
  diff_window_->show();
  diff_window_->raise();
}

void MainWindow::saveSessionDialog() {
  if (!session_io_) {
    showError(tr("Cannot save the session"),
              tr("this build has no session writer (the profiler store is not attached)"));
    return;
  }
  QString path = QFileDialog::getSaveFileName(this, tr("Save session as"), {},
                                              tr("ampscope sessions (*.%1)").arg(kSessionSuffix));
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QLatin1Char('.') + QLatin1String(kSessionSuffix);
  try {
    session_io_->saveCurrent(path.toStdString());
    addRecentFile(path);
    statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
  } catch (const std::exception& e) {
    showError(tr("Cannot save %1").arg(QFileInfo(path).fileName()), QString::fromUtf8(e.what()));
  }
}

void MainWindow::exportPlotDialog() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export plots"), QStringLiteral("ampscope-plots.png"),
                                   tr("PNG image (*.png);;SVG, the focused plot (*.svg);;PDF, the focused plot (*.pdf)"));
  if (path.isEmpty()) return;
  if (!plots_->exportImage(path))
    showError(tr("Export failed"), tr("could not write %1").arg(path));
}

std::string MainWindow::exportSource(QString* why_not) const {
  std::string source;
  if (comparisonPageShown()) {
    if (comparison_page_->isRunning()) {
      *why_not = tr("the comparison is still running; export it when it ends");
      return {};
    }
    source = comparison_page_->comparisonPath().toStdString();
  } else if (session_io_) {
    source = session_io_->shownSessionPath();
  }
  if (source.empty())
    *why_not = comparisonPageShown() ? tr("run a comparison or open a comparison file first")
                                     : tr("run a training or open a session first");
  return source;
}

bool MainWindow::exportReport(const QString& path) {
  QString why;
  const std::string source = exportSource(&why);
  if (source.empty()) {
    showError(tr("No report yet"), why);
    return false;
  }
  file_loader_->writeReport(QString::fromStdString(source), path);
  return true;
}

bool MainWindow::exportData(profiler::ExportFormat format, const QString& target) {
  QString why;
  const std::string source = exportSource(&why);
  if (source.empty()) {
    showError(tr("Nothing to export yet"), why);
    return false;
  }
  file_loader_->writeExport(QString::fromStdString(source), format, target);
  return true;
}

void MainWindow::exportDataDialog() {
  QString why;
  const std::string source = exportSource(&why);
  if (source.empty()) return showError(tr("Nothing to export yet"), why);
  const QString path = QString::fromStdString(source);
  const bool comparison = comparisonPageShown();
  if (const std::optional<ExportChoice> choice = askExport(this, path, comparison))
    exportData(choice->format, choice->target);
}

void MainWindow::exportReportDialog() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export HTML report"),
                                                    QStringLiteral("ampscope-report.html"),
                                                    tr("HTML (*.html)"));
  if (!path.isEmpty()) exportReport(path);
}

void MainWindow::updateRecentMenu() {
  recent_menu_->clear();
  const QStringList files = QSettings().value(kRecentKey).toStringList();
  for (const QString& f : files)
    recent_menu_->addAction(QFileInfo(f).fileName(), this, [this, f] { openSession(f); })
        ->setToolTip(f);
  recent_menu_->setEnabled(!files.isEmpty());
}

void MainWindow::addRecentFile(const QString& path) {
  QSettings settings;
  QStringList files = settings.value(kRecentKey).toStringList();
  const QString absolute = QFileInfo(path).absoluteFilePath();
  files.removeAll(absolute);
  files.prepend(absolute);
  while (files.size() > kMaxRecentFiles) files.removeLast();
  settings.setValue(kRecentKey, files);
  updateRecentMenu();
}

void MainWindow::applySavedConfig(const std::string& config_json) {
  if (config_json.empty()) return;
  try {
    run_panel_->setConfig(engine::config_from_json(config_json));
  } catch (const std::exception& e) {
    // The data opened; only its settings could not be shown. Not worth the banner.
    statusBar()->showMessage(tr("The run panel keeps its settings: %1").arg(QString::fromUtf8(e.what())), 10000);
  }
}

void MainWindow::resetLayout() {
  restoreState(default_state_, kLayoutVersion);
  for (QDockWidget* d : findChildren<QDockWidget*>()) d->show();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  // The training thread must end before the window (and the series it feeds) goes away;
  // shutdown() stops after the step in progress and drains what it recorded.
  if (controller_->isActive() || comparison_page_->isRunning()) {
    statusBar()->showMessage(tr("Stopping the run…"));
    QApplication::setOverrideCursor(Qt::WaitCursor);
    controller_->shutdown();
    comparison_page_->shutdown();
    QApplication::restoreOverrideCursor();
  }
  if (options_.restore_layout) {
    QSettings settings;
    settings.setValue(kGeometryKey, saveGeometry());
    settings.setValue(kStateKey, saveState(kLayoutVersion));
  }
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const auto urls = event->mimeData()->urls();
  const bool sessions = !urls.isEmpty() && std::all_of(urls.begin(), urls.end(), [](const QUrl& url) {
    return url.isLocalFile() && url.toLocalFile().endsWith(QLatin1Char('.') + QLatin1String(kSessionSuffix));
  });
  if (sessions) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  QStringList paths;
  for (const QUrl& url : event->mimeData()->urls()) paths << url.toLocalFile();
  openSessions(paths);
  event->acceptProposedAction();
}

}  // namespace ampscope::ui
