// The window driving real (tiny, CPU) training runs through TrainingController:
// plots fill, pause holds the step count, stop and failures return to idle,
// closing mid-run joins the training thread, and repaints stay throttled.
#include <qcustomplot.h>

#include <QLabel>
#include <QPushButton>
#include <QTest>
#include <atomic>
#include <thread>

#include "engine/events.h"
#include "engine/trainer.h"
#include "tests/ui/qt_test_env.h"
#include "tests/ui/ui_test_data.h"
#include "ui/models/op_stats_model.h"
#include "ui/models/run_series.h"
#include "ui/widgets/gradients_pane.h"
#include "ui/widgets/kernel_view.h"
#include "ui/widgets/live_plots.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/op_explorer.h"
#include "ui/widgets/run_panel.h"
#include "ui/widgets/training_controller.h"

namespace ampscope::ui {
namespace {

using engine::RunState;
using testing::waitUntil;
using namespace std::chrono_literals;

engine::TrainConfig tinyRun(int64_t steps) {
  engine::TrainConfig c;
  c.model.kind = engine::ModelKind::kMLP;
  c.model.layers = 1;
  c.model.width = 32;
  c.data.synthetic_samples = 512;
  c.precision = engine::Precision::kBF16;
  c.use_scaler = true;  // bf16 with a scaler, so the loss-scale plot has a scale to show
  c.device = engine::DeviceChoice::kCPU;
  c.batch_size = 16;
  c.steps = steps;
  return c;
}

int points(const MainWindow& w, LivePlots::Metric m, int g = 0) {
  return w.livePlots()->graph(m, g)->dataCount();
}

class LiveRun : public ::testing::Test {
 protected:
  void SetUp() override {
    window_ = std::make_unique<MainWindow>(MainWindow::Options{.restore_layout = false});
    window_->show();
  }
  MainWindow& w() { return *window_; }
  RunPanel& panel() { return *window_->runPanel(); }
  TrainingController& controller() { return *window_->controller(); }
  std::unique_ptr<MainWindow> window_;
};

TEST_F(LiveRun, PlotsFillPauseHoldsTheStepResumeContinuesStopReturnsToIdle) {
  const engine::Trainer* trainer = nullptr;
  controller().setTrainerSetup([&](engine::Trainer& t) { trainer = &t; });
  panel().setConfig(tinyRun(100000));
  EXPECT_TRUE(panel().startButton()->isEnabled());
  EXPECT_FALSE(panel().stopButton()->isEnabled());
  EXPECT_FALSE(panel().pauseButton()->isEnabled());

  panel().startButton()->click();
  EXPECT_FALSE(panel().startButton()->isEnabled());
  EXPECT_TRUE(panel().pauseButton()->isEnabled());
  EXPECT_TRUE(panel().stopButton()->isEnabled());
  ASSERT_TRUE(waitUntil([&] { return points(w(), LivePlots::kLoss) >= 30; }))
      << "state " << runStateLabel(controller().state()).toStdString();

  // Every graph got the same points the controller recorded.
  const int n = controller().series().size();
  EXPECT_EQ(points(w(), LivePlots::kLoss, 0), n);
  EXPECT_EQ(points(w(), LivePlots::kLoss, 1), n);
  EXPECT_EQ(points(w(), LivePlots::kLossScale), n);
  EXPECT_EQ(points(w(), LivePlots::kStepTime, 0), n);
  EXPECT_EQ(points(w(), LivePlots::kStepTime, 1), n);
  EXPECT_EQ(points(w(), LivePlots::kMemory), n);
  EXPECT_EQ(points(w(), LivePlots::kGradNorm), n);
  EXPECT_DOUBLE_EQ(w().livePlots()->graph(LivePlots::kLossScale, 0)->data()->at(0)->value, 65536.0);
  EXPECT_EQ(controller().runInfo().device, QStringLiteral("cpu"));

  panel().pauseButton()->click();
  EXPECT_FALSE(panel().pauseButton()->isEnabled());  // a pause is pending until the step ends
  ASSERT_TRUE(waitUntil([&] { return controller().state() == RunState::kPaused; }));
  EXPECT_TRUE(panel().resumeButton()->isEnabled());
  EXPECT_FALSE(panel().pauseButton()->isEnabled());
  // The paused event follows the last step in the queue, so that step is in the
  // series now: exactly the steps the trainer completed.
  ASSERT_NE(trainer, nullptr);
  const int paused_at = controller().series().size();
  EXPECT_EQ(paused_at, trainer->completed_steps());
  ASSERT_TRUE(waitUntil([&] { return points(w(), LivePlots::kLoss) == paused_at; }));
  // Paused means no step for as long as one looks; a few ticks' worth is enough to see one.
  testing::spinFor(10 * std::chrono::milliseconds(TrainingController::kTickIntervalMs));
  EXPECT_EQ(trainer->completed_steps(), paused_at);
  EXPECT_EQ(controller().series().size(), paused_at);

  panel().resumeButton()->click();
  ASSERT_TRUE(waitUntil([&] { return controller().series().size() > paused_at + 5; }));
  EXPECT_EQ(controller().state(), RunState::kRunning);
  EXPECT_TRUE(panel().pauseButton()->isEnabled());

  panel().stopButton()->click();
  ASSERT_TRUE(waitUntil([&] { return controller().state() == RunState::kStopped; }));
  EXPECT_TRUE(panel().startButton()->isEnabled());
  EXPECT_FALSE(panel().stopButton()->isEnabled());
  EXPECT_FALSE(panel().pauseButton()->isEnabled());
  EXPECT_FALSE(panel().resumeButton()->isEnabled());
  EXPECT_TRUE(w().bannerText().isEmpty());
  EXPECT_EQ(points(w(), LivePlots::kLoss), controller().series().size());
}

TEST_F(LiveRun, ARunThatFinishesLeavesItsCurveAndANewRunStartsClean) {
  panel().setConfig(tinyRun(12));
  panel().startButton()->click();
  ASSERT_TRUE(waitUntil([&] { return controller().state() == RunState::kFinished; }));
  EXPECT_EQ(points(w(), LivePlots::kLoss), 12);
  EXPECT_TRUE(panel().startButton()->isEnabled());
  panel().setConfig(tinyRun(5));
  panel().startButton()->click();
  ASSERT_TRUE(waitUntil([&] { return controller().state() == RunState::kFinished; }));
  EXPECT_EQ(points(w(), LivePlots::kLoss), 5);
}

TEST_F(LiveRun, AFailingRunShowsItsErrorInTheWindowAndReturnsToIdle) {
  engine::TrainConfig c = tinyRun(20);
  c.data.kind = engine::DataKind::kMNIST;
  c.data.path = "/nonexistent/ampscope/train-images-idx3-ubyte";
  panel().setConfig(c);
  panel().startButton()->click();
  ASSERT_TRUE(waitUntil([&] { return controller().state() == RunState::kFailed; }));
  const QString banner = w().bannerText();
  EXPECT_TRUE(banner.startsWith(QStringLiteral("The run failed: "))) << banner.toStdString();
  EXPECT_TRUE(banner.contains(QStringLiteral("train-images-idx3-ubyte"))) << banner.toStdString();
  EXPECT_TRUE(panel().startButton()->isEnabled());
  EXPECT_FALSE(panel().stopButton()->isEnabled());
  EXPECT_FALSE(controller().isActive());

  // Impossible settings fail before a thread starts, the same way.
  c = tinyRun(20);
  c.model.kind = engine::ModelKind::kGPT;
  c.model.width = 30;
  c.model.heads = 4;
  panel().setConfig(c);
  panel().startButton()->click();
  EXPECT_EQ(controller().state(), RunState::kFailed);
  EXPECT_TRUE(w().bannerText().contains(QStringLiteral("The run failed")));
  EXPECT_TRUE(panel().startButton()->isEnabled());

  // The next good run clears the banner.
  panel().setConfig(tinyRun(3));
  panel().startButton()->click();
  EXPECT_TRUE(w().bannerText().isEmpty());
  ASSERT_TRUE(waitUntil([&] { return controller().state() == RunState::kFinished; }));
}

TEST_F(LiveRun, ClosingTheWindowDuringARunStopsAndJoinsTheTrainingThread) {
  panel().setConfig(tinyRun(100000));
  panel().startButton()->click();
  ASSERT_TRUE(waitUntil([&] { return controller().series().size() >= 5; }));
  w().close();
  EXPECT_FALSE(controller().isActive());
  EXPECT_EQ(controller().state(), RunState::kStopped);
  // Whatever the run recorded up to the stop is in the series.
  EXPECT_GE(controller().series().size(), 5);
  EXPECT_EQ(points(w(), LivePlots::kLoss), controller().series().size());
}

// Holds the training thread before step 2 until the GUI has handed on step 1.
class HoldBeforeStepTwo : public engine::TrainingObserver {
 public:
  void on_step_begin(int64_t step) override {
    if (step == 2) held_ok = waitOnAnyThread([&] { return release.load(); });
  }
  static bool waitOnAnyThread(const std::function<bool()>& done) {
    QElapsedTimer timer;
    timer.start();
    while (!done()) {
      if (timer.elapsed() > 30000) return false;
      std::this_thread::yield();
    }
    return true;
  }
  std::atomic<bool> release{false};
  std::atomic<bool> held_ok{true};
};

// Issue 14's race: the run ends while a tick is handing on its steps. The tick
// used to see the ended state, drain the queue again to look for the terminal
// event and throw away what that drain returned: the last steps of the run.
TEST_F(LiveRun, ARunThatEndsDuringATickKeepsEveryStep) {
  engine::Trainer* trainer = nullptr;
  HoldBeforeStepTwo hold;
  controller().setTrainerSetup([&](engine::Trainer& t) {
    trainer = &t;
    t.add_observer(&hold);
  });
  bool waited_for_end = false;
  QObject::connect(&controller(), &TrainingController::stepsAppended, &controller(), [&] {
    if (hold.release) return;
    hold.release = true;  // the run's other steps and its end happen now, inside this tick
    waited_for_end = HoldBeforeStepTwo::waitOnAnyThread([&] { return engine::is_terminal(trainer->state()); });
  });
  panel().setConfig(tinyRun(8));
  panel().startButton()->click();
  ASSERT_TRUE(waitUntil([&] { return !controller().isActive(); }));
  EXPECT_TRUE(hold.held_ok);
  EXPECT_TRUE(waited_for_end);
  EXPECT_EQ(controller().state(), RunState::kFinished);
  EXPECT_EQ(controller().series().size(), 8);
  ASSERT_TRUE(waitUntil([&] { return points(w(), LivePlots::kLoss) == 8; }));
}

// The reproduction (4 of 200 short runs lost steps), as a test: 200 in a row.
TEST_F(LiveRun, TwoHundredShortRunsEachShowEveryStep) {
  for (int run = 0; run < 200; ++run) {
    panel().setConfig(tinyRun(3));
    panel().startButton()->click();
    ASSERT_TRUE(waitUntil([&] { return !controller().isActive(); })) << "run " << run;
    ASSERT_EQ(controller().state(), RunState::kFinished) << "run " << run;
    ASSERT_EQ(controller().series().size(), 3) << "run " << run;
  }
}

// The session writer's error and dropped records reach the status bar while the
// run goes on, stay after it ends, and a new run starts with a clean slate.
TEST_F(LiveRun, WhatTheRecordingLostIsShownInTheStatusBar) {
  profiler::RecordingHealth health;
  controller().setHealthSource([&] { return health; });
  panel().setConfig(tinyRun(100000));
  panel().startButton()->click();
  ASSERT_TRUE(waitUntil([&] { return controller().series().size() >= 2; }));
  EXPECT_TRUE(w().recordingStatusText().isEmpty());
  health.store_error = "database or disk is full";
  health.store_dropped_batches = 3;
  ASSERT_TRUE(waitUntil([&] { return !w().recordingStatusText().isEmpty(); }));
  EXPECT_TRUE(w().recordingStatusText().contains(QStringLiteral("database or disk is full")))
      << w().recordingStatusText().toStdString();
  EXPECT_TRUE(w().recordingStatusText().contains(QStringLiteral("did not store 3 batches")))
      << w().recordingStatusText().toStdString();
  panel().stopButton()->click();
  ASSERT_TRUE(waitUntil([&] { return controller().state() == RunState::kStopped; }));
  EXPECT_FALSE(w().recordingStatusText().isEmpty());

  health = {};
  panel().setConfig(tinyRun(3));
  panel().startButton()->click();
  EXPECT_TRUE(w().recordingStatusText().isEmpty());
  ASSERT_TRUE(waitUntil([&] { return controller().state() == RunState::kFinished; }));
  EXPECT_TRUE(w().recordingStatusText().isEmpty());
}

engine::StepEvent fakeStep(int64_t step) {
  engine::StepEvent e;
  e.step = step;
  e.loss = 2.0 / static_cast<double>(step);
  e.loss_scale = step % 500 == 0 ? 32768.0 : 65536.0;
  e.skipped = step % 500 == 0;
  e.grad_norm = 1.0;
  e.step_time_ms = 5.0;
  e.samples_per_second = 6400.0;
  e.memory.allocated_bytes = 100 << 20;
  return e;
}

TEST_F(LiveRun, ABurstOfTenThousandStepsCostsAHandfulOfReplots) {
  auto queue = std::make_shared<engine::EventQueue>(16384);
  ASSERT_TRUE(QTest::qWaitForWindowExposed(window_.get()));
  testing::spinFor(5 * std::chrono::milliseconds(TrainingController::kTickIntervalMs));  // first paints settle
  const int before = w().livePlots()->replotCount();
  for (int64_t s = 1; s <= 10000; ++s) ASSERT_TRUE(queue->try_push(fakeStep(s)));
  controller().watchQueue(queue);
  ASSERT_TRUE(waitUntil([&] {
    return points(w(), LivePlots::kLoss) == 10000 &&
           w().livePlots()->replotCount() - before >= LivePlots::kMetricCount;
  }));
  // Any further replot would come within a few ticks; count them too.
  testing::spinFor(5 * std::chrono::milliseconds(TrainingController::kTickIntervalMs));
  EXPECT_EQ(controller().series().size(), 10000);
  EXPECT_EQ(w().livePlots()->graph(LivePlots::kLossScale, 1)->dataCount(), 20);  // skipped markers
  const int replots = w().livePlots()->replotCount() - before;
  EXPECT_GE(replots, LivePlots::kMetricCount);      // each plot showed the new data
  EXPECT_LE(replots, 3 * LivePlots::kMetricCount);  // ... a handful of times, not 10,000
}

TEST_F(LiveRun, AProducerFasterThanTheScreenIsDrawnAtMostThirtyTimesASecond) {
  auto queue = std::make_shared<engine::EventQueue>(16384);
  controller().watchQueue(queue);
  ASSERT_TRUE(QTest::qWaitForWindowExposed(window_.get()));
  testing::spinFor(5 * std::chrono::milliseconds(TrainingController::kTickIntervalMs));  // first paints settle
  const int before = w().livePlots()->replotCount();
  std::atomic<bool> done{false};
  // ~10 steps per millisecond for one second: far more than the screen can show.
  std::thread producer([&] {
    for (int64_t s = 1; s <= 10000; ++s) {
      queue->try_push(fakeStep(s));
      if (s % 10 == 0) std::this_thread::sleep_for(1ms);
    }
    done = true;
  });
  QElapsedTimer timer;
  timer.start();
  waitUntil([&] { return done.load(); }, 20s);
  producer.join();
  ASSERT_TRUE(waitUntil([&] { return controller().series().size() == 10000; }));
  const double seconds = static_cast<double>(timer.elapsed()) / 1000.0;
  const int replots_per_plot = (w().livePlots()->replotCount() - before) / LivePlots::kMetricCount;
  EXPECT_EQ(controller().series().size(), 10000);
  EXPECT_LE(replots_per_plot,
            static_cast<int>(seconds * 1000.0 / TrainingController::kTickIntervalMs) + 3)
      << replots_per_plot << " replots in " << seconds << " s";
  EXPECT_GE(replots_per_plot, 2);
}

TEST_F(LiveRun, AProfileSourceFillsTheOpKernelAndGradientPanes) {
  EXPECT_EQ(w().opExplorer()->model()->rowCount(), 0);
  EXPECT_EQ(w().gradientsPane()->parameterCount(), 0);
  auto hint = w().opExplorer()->findChild<QLabel*>(QStringLiteral("paneHint"));
  ASSERT_NE(hint, nullptr);
  EXPECT_TRUE(hint->text().contains(QStringLiteral("once the profiler is attached")));

  int polls = 0;
  controller().setProfileSource([&] {
    ++polls;
    return testing::realisticSnapshot(std::max<int64_t>(1, controller().series().size()));
  });
  panel().setConfig(tinyRun(15));
  panel().startButton()->click();
  ASSERT_TRUE(waitUntil([&] { return controller().state() == RunState::kFinished; }));
  EXPECT_GT(polls, 0);
  EXPECT_EQ(w().opExplorer()->model()->rowCount(), 11);
  EXPECT_EQ(w().kernelView()->barCount(), 6);
  EXPECT_EQ(w().gradientsPane()->parameterCount(), 4);
  EXPECT_TRUE(w().gradientsPane()->fractionsText().contains(
      QStringLiteral("underflow (→ 0 in fp16) 3.1 %")))
      << w().gradientsPane()->fractionsText().toStdString();
  EXPECT_EQ(controller().latestProfile()->step, 15);

  // For looking at the panes with data: AMPSCOPE_UI_GRAB_DIR=/tmp/grabs test_ui_live_run
  const QString grab_dir = qEnvironmentVariable("AMPSCOPE_UI_GRAB_DIR");
  if (!grab_dir.isEmpty()) {
    w().resize(1600, 1000);
    for (QWidget* pane :
         std::initializer_list<QWidget*>{w().opExplorer(), w().kernelView(), w().gradientsPane()}) {
      pane->resize(1400, 600);
      pane->show();
      testing::spinFor(300ms);
      pane->grab().save(
          grab_dir + QLatin1Char('/') +
          QString::fromLatin1(pane->metaObject()->className()).section(QStringLiteral("::"), -1) +
          QStringLiteral(".png"));
    }
  }
}

}  // namespace
}  // namespace ampscope::ui
