// ampscope-ui's composition, in the library: LiveProfiling attaches a profiler to
// every run the window starts, records each into its own autosaved session, feeds
// the live views from it, and lets "Save session as" copy the run's session.
// LibTorch-using headers first: Qt's keyword macros must not meet them.
#include "engine/config.h"
#include "profiler/report/findings.h"
#include "profiler/report/report_data.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_view.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_configs.h"
// Qt from here on.
#include <QDir>
#include <QRegularExpression>
#include <filesystem>

#include "tests/ui/qt_test_env.h"
#include "ui/models/op_stats_model.h"
#include "ui/models/readiness_model.h"
#include "ui/models/store_session_io.h"
#include "ui/widgets/findings_pane.h"
#include "ui/widgets/gradients_pane.h"
#include "ui/widgets/live_profiling.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/op_explorer.h"
#include "ui/widgets/readiness_pane.h"
#include "ui/widgets/run_findings.h"
#include "ui/widgets/run_panel.h"
#include "ui/widgets/training_controller.h"

namespace ampscope::ui {
namespace {

using namespace std::chrono_literals;

engine::TrainConfig tinyRun(engine::Precision precision, int64_t steps) {
  engine::TrainConfig c = test::tiny_mlp(steps);
  c.precision = precision;
  return c;
}

bool runToEnd(MainWindow& window, const engine::TrainConfig& config) {
  window.runPanel()->setConfig(config);
  window.startRun();
  return testing::waitUntil(
      [&] { return engine::is_terminal(window.controller()->state()); }, std::chrono::minutes(3));
}

TEST(LiveProfiling, EachRunIsRecordedIntoItsOwnSessionAndFeedsTheLiveViews) {
  test::ScratchDir dir;
  const QString sessions = QString::fromStdString((dir / "sessions").string());
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  LiveProfiling live(*window.controller(), *window.runPanel(), io, sessions);
  window.show();
  EXPECT_EQ(live.currentSessionPath(), "");
  // Gradients (and readiness) every 5 steps, so the 6-step run samples step 5; the
  // panel's default is every entry point's, 10 (profiler/capture_option_specs.h).
  profiler::CaptureSettings sampling;
  sampling.gradient_every = 5;
  window.runPanel()->setCaptureSettings(sampling);

  ASSERT_TRUE(runToEnd(window, tinyRun(engine::Precision::kBF16, 6)));
  ASSERT_EQ(window.controller()->state(), engine::RunState::kFinished);
  const std::string first = live.currentSessionPath();
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(std::filesystem::path(first).parent_path(), std::filesystem::path(sessions.toStdString()));
  EXPECT_EQ(io.shownSessionPath(), first);
  {
    const auto session = profiler::SessionReader::open(first);
    EXPECT_EQ(session.steps().size(), 6u);
    EXPECT_EQ(session.meta_value("final_state").value_or(""), "finished");
    EXPECT_GT(session.op_count(), 0);
  }
  // The live op table came from the run's profiler, and so did precision readiness
  // (gradients sampled every 5 steps, as set above: step 5).
  EXPECT_TRUE(testing::waitUntil([&] { return window.opExplorer()->model()->rowCount() > 0; }, 10s));
  EXPECT_TRUE(testing::waitUntil([&] { return window.readinessPane()->model()->rowCount() > 0; }, 10s));
  EXPECT_EQ(window.readinessPane()->model()->index(0, ReadinessModel::kLayer).data().toString(),
            QStringLiteral("hidden.0"));
  EXPECT_TRUE(window.recordingStatusText().isEmpty()) << window.recordingStatusText().toStdString();
  // The gradient pane says how the samples were taken, in the words the session gives
  // `summary` and the report (the same text, live and from the file).
  const QString said =
      QStringLiteral("Samples: ") + QString::fromStdString(profiler::load_session_view(first).range_sampling);
  EXPECT_TRUE(said.startsWith(QStringLiteral("Samples: every 5 steps"))) << said.toStdString();
  EXPECT_TRUE(testing::waitUntil([&] { return window.gradientsPane()->samplingText() == said; }, 10s))
      << window.gradientsPane()->samplingText().toStdString() << " vs " << said.toStdString();

  // The run's findings, read from its session once it ended: the report's own.
  ASSERT_TRUE(testing::waitUntil([&] { return window.findingsPane()->showsFindings(); }, 10s));
  QStringList verdict;
  for (const std::string& sentence :
       profiler::session_findings(profiler::load_session_view(first, profiler::kReportViewOptions)).verdict)
    verdict << QString::fromStdString(sentence);
  EXPECT_FALSE(verdict.isEmpty());
  EXPECT_EQ(window.findingsPane()->verdictText(), verdict.join(QLatin1Char('\n')));

  // "Save session as" copies the run's session.
  const std::string copy = (dir / "copy.ampscope").string();
  io.saveCurrent(copy);
  EXPECT_EQ(profiler::SessionReader::open(copy).steps().size(), 6u);

  // A second run gets a session of its own; the first stays whole.
  ASSERT_TRUE(runToEnd(window, tinyRun(engine::Precision::kFP32, 4)));
  const std::string second = live.currentSessionPath();
  EXPECT_NE(second, first);
  EXPECT_EQ(profiler::SessionReader::open(second).steps().size(), 4u);
  EXPECT_EQ(profiler::SessionReader::open(first).steps().size(), 6u);
  EXPECT_EQ(QDir(sessions).entryList({QStringLiteral("*.ampscope")}, QDir::Files).size(), 2);
}

// A built-in run's findings fill in while it goes on, read again from its session as it grows
// ("so far, through step N"), and are the whole session's once it ends.
TEST(LiveProfiling, ARunsFindingsAreReadAsItGoesOnAndWholeWhenItEnds) {
  test::ScratchDir dir;
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  LiveProfiling live(*window.controller(), *window.runPanel(), io, QString::fromStdString(dir.path().string()));
  window.runFindings()->setInterval(20);
  window.show();
  const FindingsPane* pane = window.findingsPane();
  window.runPanel()->setConfig(tinyRun(engine::Precision::kBF16, 1'000'000));
  window.startRun();
  const auto through_step = [&] {
    static const QRegularExpression step(QStringLiteral("^So far, through step (\\d+): the run goes on"));
    const QRegularExpressionMatch m = step.match(pane->soFarText());
    return m.hasMatch() ? m.captured(1).toLongLong() : int64_t{0};
  };
  int64_t first = 0;
  ASSERT_TRUE(testing::waitUntil(
      [&] { return pane->showsFindings() && (first = through_step()) > 0; }, 2min))
      << pane->soFarText().toStdString();
  EXPECT_TRUE(window.controller()->isActive());
  EXPECT_FALSE(pane->verdictText().isEmpty());
  // Read again as the run goes on.
  ASSERT_TRUE(testing::waitUntil([&] { return through_step() > first; }, 2min)) << pane->soFarText().toStdString();

  window.stopRun();
  ASSERT_TRUE(testing::waitUntil([&] { return engine::is_terminal(window.controller()->state()); }, 2min));
  ASSERT_TRUE(testing::waitUntil([&] { return pane->showsFindings() && pane->soFarText().isEmpty(); }, 30s))
      << pane->soFarText().toStdString();
  QStringList verdict;
  for (const std::string& sentence :
       profiler::session_findings(profiler::load_session_view(live.currentSessionPath(), profiler::kReportViewOptions))
           .verdict)
    verdict << QString::fromStdString(sentence);
  EXPECT_EQ(pane->verdictText(), verdict.join(QLatin1Char('\n')));
}

// The window outlives the composition (as in main(), where it is destroyed first):
// a run in progress is ended and its session closed, and nothing reads the gone profiler.
TEST(LiveProfiling, GoingAwayMidRunEndsTheRunAndClosesItsSession) {
  test::ScratchDir dir;
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  std::string path;
  {
    LiveProfiling live(*window.controller(), *window.runPanel(), io, QString::fromStdString(dir.path().string()));
    window.runPanel()->setConfig(tinyRun(engine::Precision::kBF16, 1'000'000));
    window.startRun();
    ASSERT_TRUE(testing::waitUntil([&] { return window.controller()->series().size() >= 3; }, 2min));
    path = live.currentSessionPath();
  }
  EXPECT_TRUE(engine::is_terminal(window.controller()->state()));
  const auto session = profiler::SessionReader::open(path);
  EXPECT_EQ(session.meta_value("final_state").value_or(""), "stopped");
  EXPECT_GE(session.steps().size(), 3u);
  testing::spinFor(100ms);  // the controller's timer runs on with no source to read
}

}  // namespace
}  // namespace ampscope::ui
