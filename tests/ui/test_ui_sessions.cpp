// Sessions in the GUI: one recorded headless (as `ampscope profile` does) opens
// into the same views as a live run; bad files are messages in the window; the
// live run's session can be saved as a copy.
// LibTorch-using headers first: Qt's keyword macros must not meet them.
#include "engine/trainer.h"
#include "profiler/capture/profiler.h"
#include "profiler/store/session_reader.h"
#include "profiler/process_identity.h"
#include "profiler/session_meta_keys.h"
#include "profiler/store/session_writer.h"
#include "profiler/report/findings.h"
#include "profiler/report/report_data.h"
#include "tests/profiler_core/session_fixture.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_configs.h"
// Qt from here on.
#include <qcustomplot.h>

#include <sys/wait.h>
#include <unistd.h>

#include <QLabel>

#include <fstream>

#include "tests/ui/qt_test_env.h"
#include "tests/ui/window_files.h"
#include "ui/models/findings_model.h"
#include "ui/models/model_roles.h"
#include "ui/models/op_stats_model.h"
#include "ui/models/readiness_model.h"
#include "ui/models/store_session_io.h"
#include "ui/models/table_filter_proxy.h"
#include "ui/widgets/findings_pane.h"
#include "ui/widgets/gradients_pane.h"
#include "ui/widgets/kernel_view.h"
#include "ui/widgets/live_plots.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/op_explorer.h"
#include "ui/widgets/readiness_pane.h"
#include "ui/widgets/run_panel.h"
#include "ui/widgets/session_follower.h"

namespace ampscope::ui {
namespace {

std::string record_session(const test::ScratchDir& dir, int64_t steps, int64_t eval_every = 0) {
  profiler::ProfilerOptions options;
  options.session_path = (dir / "headless.ampscope").string();
  options.capture.gradient_every = 2;
  options.capture.sample_budget_percent = 0;  // every K steps exactly, whatever they cost
  options.capture.readiness_every = 1;        // readiness on each of them too
  options.capture.trace_gpu = false;          // as `--no-gpu-trace` (on the CPU it traces nothing either way)
  engine::TrainConfig c = test::tiny_gpt(engine::Precision::kFP16, steps);
  c.eval_every = eval_every;
  c.eval_batches = 2;
  profiler::Profiler profiler(options);
  engine::Trainer trainer(c);
  trainer.add_observer(&profiler);
  trainer.start();
  trainer.wait();
  EXPECT_EQ(trainer.state(), engine::RunState::kFinished) << trainer.error_message();
  return options.session_path;
}

TEST(Sessions, AHeadlessSessionOpensIntoTheSameViews) {
  test::ScratchDir dir;
  const std::string path = record_session(dir, 6);
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  // Profiling settings other than the session's, as a user may have left them.
  window.runPanel()->setCaptureSettings({.window_start = 40, .window_steps = 5, .every_n_steps = 7,
                                         .gradient_every = 9, .sample_budget_percent = 20, .readiness_every = 3});
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(path))) << window.bannerText().toStdString();
  testing::spinFor(std::chrono::milliseconds(200));
  EXPECT_EQ(window.livePlots()->graph(LivePlots::kLoss, 0)->dataCount(), 6);
  EXPECT_EQ(window.livePlots()->graph(LivePlots::kLossScale, 0)->data()->at(0)->value, 65536.0);
  EXPECT_GT(window.opExplorer()->model()->rowCount(), 10);
  // By default the table lists top-level ops, largest first: no autograd node or nested op on top.
  const TableFilterProxy* ops = window.opExplorer()->proxy();
  EXPECT_LT(ops->rowCount(), window.opExplorer()->model()->rowCount());
  ASSERT_GT(ops->rowCount(), 0);
  EXPECT_FALSE(ops->index(0, OpStatsModel::kOp).data().toString().startsWith("autograd::"))
      << ops->index(0, OpStatsModel::kOp).data().toString().toStdString();
  for (int r = 0; r < ops->rowCount(); ++r) EXPECT_TRUE(ops->index(r, 0).data(TopLevelRole).toBool());
  EXPECT_GT(window.gradientsPane()->parameterCount(), 0);
  EXPECT_EQ(window.gradientsPane()->samplingText(),
            QStringLiteral("Samples: every 2 steps; precision readiness on every sample"));
  // Precision readiness of the GPT's five GEMM layers, in forward order.
  ASSERT_TRUE(window.readinessPane()->showsTable());
  const ReadinessModel* readiness = window.readinessPane()->model();
  ASSERT_EQ(readiness->rowCount(), 5);
  EXPECT_EQ(readiness->index(0, ReadinessModel::kLayer).data().toString(), QStringLiteral("blocks.0.attn.qkv"));
  EXPECT_EQ(readiness->index(4, ReadinessModel::kLayer).data().toString(), QStringLiteral("head"));
  EXPECT_TRUE(window.readinessPane()->notes().contains(QStringLiteral("Over 3 sampled steps")))
      << window.readinessPane()->notes().toStdString();
  // The whole window fits a 1280 x 720 screen with every pane filled (the gradients pane and
  // the comparison page held it at 1,562 x 943 pixels before they scrolled).
  EXPECT_LE(window.minimumSizeHint().width(), 1280) << window.minimumSizeHint().width();
  EXPECT_LE(window.minimumSizeHint().height(), 720) << window.minimumSizeHint().height();
  // The run panel shows the settings the session was recorded with, so Start re-runs them.
  const engine::TrainConfig shown = window.runPanel()->config();
  EXPECT_EQ(shown.model.kind, engine::ModelKind::kGPT);
  EXPECT_EQ(shown.model.width, 32);
  EXPECT_EQ(shown.precision, engine::Precision::kFP16);
  EXPECT_EQ(shown.steps, 6);
  // ... and what it profiled (record_session's options; the op window's defaults).
  const profiler::CaptureSettings profiled = window.runPanel()->captureSettings();
  EXPECT_EQ(profiled, (profiler::CaptureSettings{.gradient_every = 2, .sample_budget_percent = 0,
                                                 .readiness_every = 1, .trace_gpu = false}))
      << profiled.window_start << " " << profiled.window_steps << " " << profiled.every_n_steps << " "
      << profiled.gradient_every << " " << profiled.sample_budget_percent << " " << profiled.readiness_every << " "
      << profiled.trace_gpu;
}

// The report's findings of the shown session are the Findings pane's: its verdict, and what to
// change with the evidence under each and the selected one's detail beside them: the same the
// HTML report and `ampscope summary` say (profiler::session_findings).
TEST(Sessions, TheReportsVerdictAndWhatToChangeShowInTheFindingsPane) {
  test::ScratchDir dir;
  // An fp16 run whose loss scale backs off every 3rd step, from 65536 to below 1.
  const std::string path = (dir / "stuck.ampscope").string();
  {
    profiler::SessionMeta meta;
    meta.model = "MLP 2x64";
    meta.precision = "fp16";
    meta.device = "cpu";
    meta.scaler_enabled = true;
    auto w = profiler::SessionWriter::create(path, meta);
    double scale = 65536;
    for (int64_t s = 1; s <= 60; ++s) {
      profiler::StepRecord r;
      r.step = s;
      r.loss = 1.0;
      r.skipped = r.found_inf = s % 3 == 0;
      if (r.skipped) scale /= 2;
      r.loss_scale = scale;
      r.step_time_ms = 5;
      w->append_step(r);
    }
    w->set_meta_value(profiler::meta_key::kFinalState, "finished");  // the run's end, as the profiler says it
    w->close();
  }
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  EXPECT_FALSE(window.findingsPane()->showsFindings());  // nothing shown yet: the pane says so
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(path))) << window.bannerText().toStdString();
  const FindingsPane* pane = window.findingsPane();
  ASSERT_TRUE(pane->showsFindings());
  const profiler::SessionFindings expected =
      profiler::session_findings(profiler::load_session_view(path, profiler::kReportViewOptions));
  QStringList verdict;
  for (const std::string& sentence : expected.verdict) verdict << QString::fromStdString(sentence);
  ASSERT_FALSE(verdict.isEmpty());
  EXPECT_EQ(pane->verdictText(), verdict.join(QLatin1Char('\n')));
  const FindingsModel* model = pane->model();
  ASSERT_EQ(model->rowCount(), static_cast<int>(expected.recommendations.size()));
  int stuck = -1;
  for (int r = 0; r < model->rowCount(); ++r) {
    EXPECT_EQ(model->index(r, 0).data().toString(), QString::fromStdString(expected.recommendations[r].title));
    if (model->index(r, 0).data(FindingIdRole).toString() == QLatin1String("loss_scale_stuck_low")) stuck = r;
  }
  ASSERT_GE(stuck, 0) << "the scale ended at " << 65536.0 / (1 << 20);
  EXPECT_GT(model->rowCount(model->index(stuck, 0)), 0);  // the backoffs, as evidence
  // The first (a warning: they come first) is selected, its detail beside the list.
  EXPECT_EQ(model->index(0, 0).data(SeverityRole).toInt(), static_cast<int>(profiler::Severity::kWarning));
  EXPECT_EQ(pane->detailText(), QString::fromStdString(expected.recommendations.front().detail));
  EXPECT_EQ(pane->soFarText(), QString());  // a whole run's

  // Findings read again (a run still going) keep the reader's place: the recommendation selected
  // stays selected, its detail beside it.
  ASSERT_GE(model->rowCount(), 2);
  const int last = model->rowCount() - 1;
  window.findingsPane()->tree()->setCurrentIndex(model->index(last, 0));
  window.findingsPane()->setFindings(expected, QStringLiteral("So far"));
  EXPECT_EQ(pane->tree()->currentIndex().row(), last);
  EXPECT_EQ(pane->detailText(), QString::fromStdString(expected.recommendations[last].detail));
  EXPECT_EQ(pane->soFarText(), QStringLiteral("So far"));
  // An evidence line selected keeps its recommendation selected.
  window.findingsPane()->tree()->setCurrentIndex(model->index(0, 0, model->index(stuck, 0)));
  window.findingsPane()->setFindings(expected);
  EXPECT_EQ(pane->tree()->currentIndex(), model->index(stuck, 0));
  EXPECT_EQ(pane->soFarText(), QString());
}

// The memory plot names what its lines measure: on the CPU the process's resident set and its
// peak (no reserved line: the CPU's sample repeats the resident set there), on CUDA the
// caching allocator's allocated, reserved and peak, switching with the session shown.
TEST(Sessions, TheMemoryPlotNamesTheResidentSetOnTheCpuAndTheAllocatorsCountersOnCuda) {
  test::ScratchDir dir;
  const std::string cpu = record_session(dir, 3);
  const std::string cuda = (dir / "cuda.ampscope").string();
  test::write_fixture_file(cuda, test::make_fixture());  // device "cuda:0"
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  const LivePlots* plots = window.livePlots();
  const auto legend = [&] {
    QStringList names;
    QCPLegend* l = plots->plot(LivePlots::kMemory)->legend;
    for (int i = 0; i < l->itemCount(); ++i)
      if (auto* item = qobject_cast<QCPPlottableLegendItem*>(l->item(i))) names << item->plottable()->name();
    return names;
  };
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(cpu))) << window.bannerText().toStdString();
  EXPECT_EQ(legend(), (QStringList{"resident set", "peak resident set"}));
  EXPECT_FALSE(plots->graph(LivePlots::kMemory, 1)->visible());
  EXPECT_GT(plots->graph(LivePlots::kMemory, 0)->data()->at(0)->value, 0.0) << "the CPU's sample is measured";
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(cuda))) << window.bannerText().toStdString();
  EXPECT_EQ(legend(), (QStringList{"allocated", "reserved", "peak"}));
  EXPECT_TRUE(plots->graph(LivePlots::kMemory, 1)->visible());
}

// Validation every 3 steps of 7: the loss plot's eval series has exactly steps 3 and 6,
// with the losses the session stored (engine -> profiler -> store -> plot), in the legend.
TEST(Sessions, TheEvalLossIsASeriesAtTheValidatedStepsOnly) {
  test::ScratchDir dir;
  const std::string path = record_session(dir, 7, 3);
  const auto stored = profiler::SessionReader::open(path).steps();
  ASSERT_EQ(stored.size(), 7u);
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(path))) << window.bannerText().toStdString();
  QCPGraph* eval = window.livePlots()->graph(LivePlots::kLoss, LivePlots::kEvalLossGraph);
  EXPECT_EQ(eval->name(), QStringLiteral("eval loss"));
  ASSERT_EQ(eval->dataCount(), 2);
  EXPECT_EQ(eval->data()->at(0)->key, 3.0);
  EXPECT_EQ(eval->data()->at(1)->key, 6.0);
  ASSERT_TRUE(profiler::has_eval_loss(stored[2]));
  EXPECT_EQ(eval->data()->at(0)->value, stored[2].eval_loss);
  EXPECT_EQ(eval->data()->at(1)->value, stored[5].eval_loss);
  EXPECT_TRUE(std::isfinite(eval->data()->at(1)->value));
  EXPECT_TRUE(window.livePlots()->plot(LivePlots::kLoss)->legend->hasItemWithPlottable(eval));
  EXPECT_EQ(window.livePlots()->graph(LivePlots::kLoss, 0)->dataCount(), 7);

  // A session without validation: no eval points, no legend entry.
  test::ScratchDir other;
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(record_session(other, 3))));
  EXPECT_EQ(eval->dataCount(), 0);
  EXPECT_FALSE(window.livePlots()->plot(LivePlots::kLoss)->legend->hasItemWithPlottable(eval));
}

// Files are read off the GUI thread: openSession returns before anything is shown,
// the status bar says what is being opened, and when the user opens another file
// before the first is read, only the newest is shown.
TEST(Sessions, FilesAreReadOffTheGuiThreadAndTheNewestOneIsShown) {
  test::ScratchDir first_dir, second_dir;
  const QString first = QString::fromStdString(record_session(first_dir, 6));
  const QString second = QString::fromStdString(record_session(second_dir, 3));
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  QStringList shown;
  QObject::connect(&window, &MainWindow::fileOpened, [&](const QString& path, bool ok) {
    if (ok) shown << path;
  });
  const auto* busy = window.findChild<QLabel*>(QStringLiteral("busyStatus"));
  ASSERT_NE(busy, nullptr);
  ASSERT_TRUE(window.openSession(first));
  ASSERT_TRUE(window.openSession(second));
  // Nothing is shown synchronously; the status bar says what is being read.
  EXPECT_EQ(window.livePlots()->graph(LivePlots::kLoss, 0)->dataCount(), 0);
  EXPECT_TRUE(busy->isVisibleTo(&window));
  EXPECT_TRUE(busy->text().contains(QStringLiteral("headless.ampscope"))) << busy->text().toStdString();
  ASSERT_TRUE(testing::waitUntil([&] { return !shown.isEmpty() && !window.fileLoader()->isBusy(); }));
  EXPECT_EQ(shown, QStringList{second});  // the first file's result was dropped, not shown
  EXPECT_EQ(window.livePlots()->graph(LivePlots::kLoss, 0)->dataCount(), 3);
  EXPECT_FALSE(busy->isVisibleTo(&window));
}

// A pid that runs nothing now: a child that exited, reaped.
pid_t gone_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  if (child > 0) ::waitpid(child, nullptr, 0);
  return child;
}

// A session whose run never ended (its writer killed) says so in the status bar when
// opened, as a live run says what its recording lost.
TEST(Sessions, AnUnclosedSessionSaysSoInTheStatusBar) {
  test::ScratchDir dir;
  const std::string path = (dir / "killed.ampscope").string();
  const pid_t killed = gone_pid();
  ASSERT_GT(killed, 0);
  {
    profiler::SessionMeta meta;
    meta.model = "mlp";
    meta.precision = "fp32";
    auto writer = profiler::SessionWriter::create(path, meta, false);
    writer->set_meta_value(profiler::meta_key::kPid, std::to_string(killed));
    for (int64_t step = 1; step <= 3; ++step) {
      profiler::StepRecord r;
      r.step = step;
      r.loss = 1.0 / static_cast<double>(step);
      r.loss_scale = 1.0;
      writer->append_step(r);
    }
    writer->close();  // no final_state: the profiler never said how the run ended
  }
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(path))) << window.bannerText().toStdString();
  EXPECT_EQ(window.livePlots()->graph(LivePlots::kLoss, 0)->dataCount(), 3);
  EXPECT_TRUE(window.recordingStatusText().contains(QStringLiteral("not closed")))
      << window.recordingStatusText().toStdString();
  // Its findings are of the steps it holds, and say so.
  EXPECT_TRUE(window.findingsPane()->showsFindings());
  EXPECT_TRUE(window.findingsPane()->soFarText().startsWith(QStringLiteral("So far, through step 3: the session is "
                                                                           "not closed")))
      << window.findingsPane()->soFarText().toStdString();
  // A finished session clears it.
  test::ScratchDir other;
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(record_session(other, 3))));
  EXPECT_TRUE(window.recordingStatusText().isEmpty()) << window.recordingStatusText().toStdString();
  EXPECT_TRUE(window.findingsPane()->showsFindings());
  EXPECT_EQ(window.findingsPane()->soFarText(), QString());
}

std::unique_ptr<profiler::SessionWriter> unfinished_session(const std::string& path, int64_t writer_pid) {
  profiler::SessionMeta meta;
  meta.model = "mlp";
  meta.precision = "fp32";
  auto writer = profiler::SessionWriter::create(path, meta, false);
  writer->set_meta_value(profiler::meta_key::kPid, std::to_string(writer_pid));
  writer->set_meta_value(profiler::meta_key::kHost, profiler::current_host_name());
  return writer;
}

void append_steps(profiler::SessionWriter& writer, int64_t first, int64_t last) {
  for (int64_t step = first; step <= last; ++step) {
    profiler::StepRecord r;
    r.step = step;
    r.loss = 2.0 / static_cast<double>(step);
    r.loss_scale = 1.0;
    writer.append_step(r);
  }
  writer.flush();  // committed: visible to the window's reader
}

// A session that another process is still writing (here: this test's writer, with
// this process as the recorded writer): the window follows it, shows the new steps
// as they are committed, says "live", and says when the run has ended.
TEST(Sessions, ASessionStillBeingWrittenIsFollowedLive) {
  test::ScratchDir dir;
  const std::string path = (dir / "live.ampscope").string();
  auto writer = unfinished_session(path, profiler::current_process_id());
  append_steps(*writer, 1, 3);
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(path))) << window.bannerText().toStdString();
  QCPGraph* loss = window.livePlots()->graph(LivePlots::kLoss, 0);
  EXPECT_EQ(loss->dataCount(), 3);
  const auto* live = window.findChild<QLabel*>(QStringLiteral("liveStatus"));
  ASSERT_NE(live, nullptr);
  EXPECT_TRUE(live->isVisibleTo(&window));
  EXPECT_TRUE(live->text().startsWith(QStringLiteral("live"))) << live->text().toStdString();
  // Not closed because its run goes on: nothing was lost.
  EXPECT_TRUE(window.recordingStatusText().isEmpty()) << window.recordingStatusText().toStdString();

  append_steps(*writer, 4, 9);
  ASSERT_TRUE(testing::waitUntil([&] { return loss->dataCount() == 9; }, std::chrono::seconds(30)))
      << loss->dataCount() << " steps shown";
  EXPECT_TRUE(window.sessionFollower()->isFollowing());

  writer->set_meta_value(profiler::meta_key::kFinalState, "finished");
  writer->close();
  ASSERT_TRUE(testing::waitUntil([&] { return !window.sessionFollower()->isFollowing(); }, std::chrono::seconds(30)));
  EXPECT_TRUE(live->text().contains(QStringLiteral("ended"))) << live->text().toStdString();
  EXPECT_EQ(loss->dataCount(), 9);
}

// A short run's end, written between the read that opens its session and the following of it
// (its last steps and its close, as `ampscope run` of a script that fails at once writes them):
// the window shows the whole session and that the run ended, not the first read and "live"
// forever (or, its writer gone by then, "killed").
TEST(Sessions, WhatARunWroteWhileItsSessionWasBeingOpenedShows) {
  test::ScratchDir dir;
  const std::string path = (dir / "short.ampscope").string();
  auto writer = unfinished_session(path, profiler::current_process_id());
  append_steps(*writer, 1, 3);
  // The window's reader: the first read done, the run writes the rest and closes before the
  // window sees it.
  class EndsAfterTheFirstRead final : public SessionIO {
   public:
    explicit EndsAfterTheFirstRead(std::unique_ptr<profiler::SessionWriter> writer) : writer_(std::move(writer)) {}
    LoadedFile load(const std::string& p) override {
      LoadedFile read = store_.load(p);
      if (writer_) {
        append_steps(*writer_, 4, 9);
        writer_->set_meta_value(profiler::meta_key::kFinalState, "finished");
        writer_->close();
        writer_.reset();
      }
      return read;
    }
    void saveCurrent(const std::string& p) override { store_.saveCurrent(p); }
    std::string shownSessionPath() const override { return store_.shownSessionPath(); }

   private:
    StoreSessionIO store_;
    std::unique_ptr<profiler::SessionWriter> writer_;
  } io(std::move(writer));
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(path))) << window.bannerText().toStdString();
  QCPGraph* loss = window.livePlots()->graph(LivePlots::kLoss, 0);
  ASSERT_TRUE(testing::waitUntil([&] { return !window.sessionFollower()->isFollowing(); }, std::chrono::seconds(30)))
      << window.sessionFollower()->statusText().toStdString();
  EXPECT_EQ(loss->dataCount(), 9);
  EXPECT_TRUE(window.sessionFollower()->statusText().contains(QStringLiteral("ended")))
      << window.sessionFollower()->statusText().toStdString();
  // Read again, the session keeps its title: the file and the run, not one then the other.
  EXPECT_TRUE(window.windowTitle().startsWith(QStringLiteral("ampscope — short.ampscope — mlp · fp32")))
      << window.windowTitle().toStdString();
}

// The process that wrote an unclosed session is gone (killed): opening it says so
// and follows nothing.
TEST(Sessions, AnUnclosedSessionWhoseWriterIsGoneIsNotFollowed) {
  const pid_t child = gone_pid();
  ASSERT_GT(child, 0);
  test::ScratchDir dir;
  const std::string path = (dir / "killed.ampscope").string();
  {
    auto writer = unfinished_session(path, child);
    append_steps(*writer, 1, 2);
    writer->close();
  }
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(path))) << window.bannerText().toStdString();
  // Read once more (what it wrote after the first read would show), then nothing is followed.
  EXPECT_TRUE(testing::waitUntil([&] { return !window.sessionFollower()->isFollowing(); }));
  const auto* live = window.findChild<QLabel*>(QStringLiteral("liveStatus"));
  ASSERT_NE(live, nullptr);
  EXPECT_TRUE(live->text().contains(QStringLiteral("pid %1").arg(child))) << live->text().toStdString();
  EXPECT_TRUE(live->text().contains(QStringLiteral("gone"))) << live->text().toStdString();
}

TEST(Sessions, PlotsExportToPngSvgAndPdf) {
  test::ScratchDir dir;
  const std::string path = record_session(dir, 3);
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.resize(1400, 900);
  window.show();
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(path)));
  testing::spinFor(std::chrono::milliseconds(200));
  const auto head = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::string bytes(64, '\0');
    in.read(bytes.data(), 64);
    return bytes;
  };
  for (const char* name : {"plots.png", "plot.svg", "plot.pdf"})
    ASSERT_TRUE(window.livePlots()->exportImage(QString::fromStdString((dir / name).string()))) << name;
  EXPECT_EQ(head(dir / "plots.png").substr(1, 3), "PNG");
  EXPECT_NE(head(dir / "plot.svg").find("<?xml"), std::string::npos);
  EXPECT_EQ(head(dir / "plot.pdf").substr(0, 4), "%PDF");
  EXPECT_GT(std::filesystem::file_size(dir / "plot.svg"), 1000u);
}

TEST(Sessions, BadFilesAreMessagesInTheWindow) {
  test::ScratchDir dir;
  test::write_file(dir / "garbage.ampscope", "not a session\n");
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  EXPECT_FALSE(testing::openAndWait(window, QString::fromStdString((dir / "garbage.ampscope").string())));
  EXPECT_TRUE(window.bannerText().contains(QStringLiteral("garbage.ampscope"))) << window.bannerText().toStdString();
  EXPECT_FALSE(testing::openAndWait(window, QString::fromStdString((dir / "missing.ampscope").string())));
  EXPECT_TRUE(window.bannerText().contains(QStringLiteral("missing.ampscope"))) << window.bannerText().toStdString();
}

TEST(Sessions, SaveCurrentWritesACopyThatOpens) {
  test::ScratchDir dir;
  const std::string path = record_session(dir, 4);
  StoreSessionIO io;
  EXPECT_THROW(io.saveCurrent((dir / "nothing.ampscope").string()), std::exception);
  io.setCurrentSessionPath(path);
  const std::string copy = (dir / "copy.ampscope").string();
  io.saveCurrent(copy);
  const auto original = profiler::SessionReader::open(path);
  const auto copied = profiler::SessionReader::open(copy);
  EXPECT_EQ(copied.steps().size(), original.steps().size());
  EXPECT_EQ(copied.op_count(), original.op_count());
  EXPECT_EQ(copied.meta().precision, "fp16");
}

TEST(Sessions, TheShownSessionExportsAsASelfContainedHtmlReport) {
  test::ScratchDir dir;
  const std::string path = record_session(dir, 6);
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  const QString report = QString::fromStdString((dir / "report.html").string());
  EXPECT_FALSE(testing::exportReportAndWait(window, report));  // nothing shown yet: a message, no file
  EXPECT_FALSE(window.bannerText().isEmpty());
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(path)));
  ASSERT_TRUE(testing::exportReportAndWait(window, report)) << window.bannerText().toStdString();
  std::ifstream in(report.toStdString());
  const std::string html{std::istreambuf_iterator<char>(in), {}};
  EXPECT_NE(html.find("<html"), std::string::npos);
  EXPECT_NE(html.find("aten::linear"), std::string::npos);  // the op table is in it
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

}  // namespace
}  // namespace ampscope::ui
