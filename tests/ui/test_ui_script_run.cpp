// File → Run a Python script: the user's own training script run from the GUI under
// capture (`ampscope run`, a process of its own). The window opens the session the
// script writes and follows it while it runs; the Script pane shows what it printed;
// Stop stops it as Ctrl-C does; what fails says why in one line and keeps the session.
#include "profiler/session_meta_keys.h"
#include "profiler/store/comparison_store.h"
#include "profiler/store/session_reader.h"
#include "tests/support/test_support.h"
// Qt from here on.
#include <qcustomplot.h>

#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QTabWidget>

#include "tests/ui/qt_test_env.h"
#include "tests/ui/window_files.h"
#include "ui/models/rank_model.h"
#include "ui/models/store_session_io.h"
#include "ui/models/op_comparison_model.h"
#include "ui/models/variant_summary_model.h"
#include "ui/widgets/comparison_page.h"
#include "ui/widgets/live_plots.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/ranks_page.h"
#include "ui/widgets/script_run_dialog.h"
#include "ui/widgets/script_run_pane.h"
#include "ui/widgets/script_runner.h"
#include "ui/widgets/session_follower.h"

namespace ampscope::ui {
namespace {

namespace fs = std::filesystem;

// A CPU bf16 loop of `steps` steps (forever with 0) printing each step's loss. With a
// `gate`, it waits before its last step until that file exists: the test holds it there.
std::string training_script(int steps, const std::string& gate = "", const std::string& tail = "") {
  std::string text = R"(import itertools, os, time, torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
STEPS, GATE = )" + std::to_string(steps) + ", '" + gate + R"('
for step in itertools.count(1) if STEPS == 0 else range(1, STEPS + 1):
    if GATE and step == STEPS:
        deadline = time.monotonic() + 120
        while not os.path.exists(GATE) and time.monotonic() < deadline:
            time.sleep(0.01)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"step {step} loss {loss.item():.4f}")
)";
  return text + tail;
}

class ScriptRun : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto python = test::python_with_torch();
    if (!python) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
    python_ = QString::fromStdString(*python);
    ASSERT_FALSE(ScriptRunner::cliPath().isEmpty()) << "the build's ampscope command";
    window_.setSessionIO(&io_);
    window_.show();
    connect_ = QObject::connect(window_.scriptRunner(), &ScriptRunner::finished,
                                [this](bool ok, const QString& summary) { outcome_ = {ok, summary}; });
  }
  void TearDown() override { QObject::disconnect(connect_); }

  ScriptRunRequest request(const std::string& script_text, const std::string& name = "train.py") {
    test::write_file(dir_ / name, script_text);
    ScriptRunRequest r;
    r.script = QString::fromStdString((dir_ / name).string());
    r.python = python_;
    r.session_path = QString::fromStdString((dir_ / "run.ampscope").string());
    return r;
  }
  bool waitForTheEnd() {
    return testing::waitUntil([&] { return outcome_.has_value(); }, std::chrono::minutes(3));
  }
  // The window has read the closed session: its follower let go.
  bool waitForTheClosedSession() {
    return testing::waitUntil(
        [&] { return !window_.sessionFollower()->isFollowing() && !window_.fileLoader()->isBusy(); },
        std::chrono::seconds(60));
  }
  int stepsShown() { return window_.livePlots()->graph(LivePlots::kLoss, 0)->dataCount(); }

  test::ScratchDir dir_;
  QString python_;
  StoreSessionIO io_;
  MainWindow window_{MainWindow::Options{.restore_layout = false}};
  QMetaObject::Connection connect_;
  std::optional<std::pair<bool, QString>> outcome_;
};

TEST_F(ScriptRun, TheScriptsSessionOpensLiveWhileItRunsAndEndsFinishedWithItsOutputShown) {
  const std::string gate = (dir_ / "go").string();
  ScriptRunRequest asked = request(training_script(5, gate));
  asked.capture.every_n_steps = 2;  // the dialog's sampling, as `ampscope run --every 2 --readiness-every 0` takes it
  asked.capture.readiness_every = 0;
  ASSERT_TRUE(window_.runScript(asked)) << window_.bannerText().toStdString();
  // Held before its last step: the window shows the steps it recorded while it runs.
  ASSERT_TRUE(testing::waitUntil([&] { return stepsShown() >= 2; }, std::chrono::seconds(90)))
      << window_.scriptRunPane()->outputText().toStdString();
  EXPECT_TRUE(window_.scriptRunner()->isRunning());
  EXPECT_TRUE(window_.sessionFollower()->isFollowing()) << "live, not a snapshot";
  EXPECT_TRUE(window_.recordingStatusText().isEmpty()) << "a run going on lost nothing: "
                                                       << window_.recordingStatusText().toStdString();
  // What the script trains is known from its first step, not only once it ends.
  const auto model_known = [&] { return window_.windowTitle().contains(QStringLiteral("(676 parameters)")); };
  ASSERT_TRUE(testing::waitUntil(model_known, std::chrono::seconds(30)))
      << window_.windowTitle().toStdString();
  EXPECT_FALSE(window_.startAction()->isEnabled()) << "no built-in run beside the script's";
  const QString running = QStringLiteral("not yet: the script runs (pid %1)").arg(window_.scriptRunner()->pid());
  const QString facts = testing::scriptFactsText(window_);
  EXPECT_TRUE(facts.contains(running)) << facts.toStdString();
  test::write_file(gate, "");

  ASSERT_TRUE(waitForTheEnd());
  EXPECT_TRUE(outcome_->first) << outcome_->second.toStdString();
  EXPECT_EQ(outcome_->second.toStdString(), "ampscope: session " + (dir_ / "run.ampscope").string() +
                                                ": 5 steps (finished); GPU tracing off: training on the CPU "
                                                "(ops are timed on the CPU)");
  ASSERT_TRUE(waitForTheClosedSession());
  EXPECT_EQ(stepsShown(), 5);
  const QString output = window_.scriptRunPane()->outputText();
  for (int step = 1; step <= 5; ++step)
    EXPECT_TRUE(output.contains(QStringLiteral("step %1 loss ").arg(step))) << output.toStdString();
  // The losses the plot shows are the ones the script printed.
  const QCPGraph* loss = window_.livePlots()->graph(LivePlots::kLoss, 0);
  const QString last = QStringLiteral("step 5 loss %1").arg(loss->data()->at(4)->value, 0, 'f', 4);
  EXPECT_TRUE(output.contains(last)) << last.toStdString() << "\n" << output.toStdString();
  EXPECT_TRUE(window_.startAction()->isEnabled());
  EXPECT_TRUE(window_.windowTitle().contains(QStringLiteral("python train.py: Sequential (676 parameters) · bf16")))
      << window_.windowTitle().toStdString();
  // The session recorded the sampling it was run with, and runs again with it.
  const auto again = ScriptRunDialog::rerunRequest(*window_.runPanel()->shownScriptFacts());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->capture, asked.capture);
}

// A script's precision comparison run from the window (`ampscope run --compare`): the
// comparison page shows the first finished run while the next is still going, and the whole
// comparison, per run and per op, once the script's last run ends.
TEST_F(ScriptRun, APrecisionComparisonOfTheScriptFillsTheComparisonPageAsItsRunsEnd) {
  // Every run after the first waits for the gate: the test sees the comparison half done.
  const std::string gate = (dir_ / "go").string(), runs = (dir_ / "runs").string();
  const std::string held = "import os, time\nRUNS, GATE = '" + runs + "', '" + gate + R"('
started = len(open(RUNS).read()) if os.path.exists(RUNS) else 0
open(RUNS, "a").write("x")
deadline = time.monotonic() + 120
while started and not os.path.exists(GATE) and time.monotonic() < deadline:
    time.sleep(0.01)
)";
  ScriptRunRequest r = request(held + training_script(0));  // endless: --max-steps stops each run
  r.compare = {QStringLiteral("fp32"), QStringLiteral("bf16")};
  r.repeats = 1;
  r.max_steps = 7;  // 5 warm-up steps, 2 timed; the profiled runs record those 2
  r.arguments = {QStringLiteral("--tag"), QStringLiteral("a b")};  // the script ignores them; a rerun keeps them
  r.session_path = QString::fromStdString((dir_ / "compare.ampscope").string());
  ASSERT_TRUE(window_.runScript(r)) << window_.bannerText().toStdString();

  ComparisonPage* page = window_.comparisonPage();
  const auto repeats_of = [&](const char* variant) -> size_t {
    const ComparisonResultsPtr results = page->results();
    if (!results || !results->report.comparison) return 0;
    for (const auto& v : results->report.comparison->variants)
      if (v.variant == variant) return v.repeats.size();
    return 0;
  };
  ASSERT_TRUE(testing::waitUntil([&] { return repeats_of("fp32") == 1; }, std::chrono::seconds(90)))
      << window_.scriptRunPane()->outputText().toStdString();
  EXPECT_TRUE(window_.scriptRunner()->isRunning()) << "bf16's run waits for the gate";
  EXPECT_TRUE(window_.comparisonPageShown());
  EXPECT_TRUE(window_.sessionFollower()->isFollowing()) << "followed while the script's runs go on";
  EXPECT_EQ(repeats_of("bf16"), 0u);
  EXPECT_TRUE(page->progressText().contains(QStringLiteral("1 of 2 timed runs finished")))
      << page->progressText().toStdString();
  EXPECT_FALSE(page->progressText().startsWith(QStringLiteral("Opened"))) << page->progressText().toStdString();
  // Beside it, the Run panel shows the script compared, not the built-in run's settings.
  EXPECT_TRUE(window_.runPanel()->showsScriptFacts());
  QString facts = testing::scriptFactsText(window_);
  EXPECT_TRUE(facts.contains(QStringLiteral("compared: fp32, bf16"))) << facts.toStdString();
  EXPECT_TRUE(facts.contains(r.script)) << facts.toStdString();
  EXPECT_TRUE(facts.contains(QStringLiteral("Sequential (676 parameters)"))) << facts.toStdString();
  const QString running = QStringLiteral("not yet: the comparison runs (pid %1)").arg(window_.scriptRunner()->pid());
  EXPECT_TRUE(facts.contains(running)) << facts.toStdString();
  EXPECT_TRUE(window_.runPanel()->rerunScriptButton()->isEnabled()) << "the file says how its runs ran the script";
  test::write_file(gate, "");

  ASSERT_TRUE(waitForTheEnd());
  EXPECT_TRUE(outcome_->first) << outcome_->second.toStdString();
  EXPECT_TRUE(outcome_->second.contains(QStringLiteral("precision comparison finished (fp32, bf16)")))
      << outcome_->second.toStdString();
  ASSERT_TRUE(testing::waitUntil(
      [&] { return repeats_of("bf16") == 1 && !window_.fileLoader()->isBusy(); }, std::chrono::seconds(60)));
  EXPECT_FALSE(window_.sessionFollower()->isFollowing());
  EXPECT_TRUE(page->progressText().startsWith(QStringLiteral("Opened compare.ampscope: python train.py")))
      << page->progressText().toStdString();
  // What the page shows is the file: both precisions timed, and profiled op by op.
  const profiler::Comparison on_disk = profiler::read_comparison((dir_ / "compare.ampscope").string());
  ASSERT_EQ(on_disk.variants.size(), 2u);
  for (const auto& v : on_disk.variants) {
    EXPECT_EQ(v.repeats.size(), 1u) << v.variant;
    EXPECT_EQ(v.profiled_steps, 2) << v.variant;
    EXPECT_TRUE(v.error.empty()) << v.variant << ": " << v.error;
  }
  EXPECT_EQ(page->summaryModel()->rowCount(), 2);
  EXPECT_GT(page->opModel()->rowCount(), 0) << "each precision's ops, matched";
  facts = testing::scriptFactsText(window_);
  EXPECT_TRUE(facts.contains(QStringLiteral("finished"))) << facts.toStdString();
  EXPECT_FALSE(facts.contains(QStringLiteral("not yet"))) << facts.toStdString();
  EXPECT_TRUE(window_.startAction()->isEnabled());

  // The Run panel's "Run this script again…" fills the dialog in as the comparison ran.
  const auto from_panel = ScriptRunDialog::rerunRequest(*window_.runPanel()->shownScriptFacts());
  ASSERT_TRUE(from_panel);
  EXPECT_EQ(from_panel->compare, r.compare);
  EXPECT_EQ(from_panel->max_steps, 7);
  EXPECT_EQ(from_panel->arguments, r.arguments);

  // The page's Run compares the script again, as its runs ran it (not the built-in setup the
  // Run panel hides), with the page's settings.
  ASSERT_TRUE(page->scriptSubject().has_value());
  const QString base = page->findChild<QLabel*>(QStringLiteral("baseLabel"))->text();
  EXPECT_TRUE(base.contains(r.script) && base.contains(QStringLiteral("built-in setup instead"))) << base.toStdString();
  page->setRepeats(1);
  page->setWarmupSteps(4);
  page->setProfiledSteps(1);
  const QString again_path = QString::fromStdString((dir_ / "again.ampscope").string());
  page->setOutputPath(again_path);
  outcome_.reset();
  ASSERT_TRUE(page->startComparison()) << window_.bannerText().toStdString();
  const ScriptRunRequest again = window_.scriptRunner()->request();
  EXPECT_TRUE(window_.scriptRunner()->isRunning());
  EXPECT_EQ(again.script, r.script);
  EXPECT_FALSE(again.module);
  EXPECT_EQ(again.arguments, r.arguments);
  EXPECT_EQ(again.working_dir.toStdString(), dir_.path().string()) << "where its runs ran: the script's directory";
  EXPECT_EQ(QFileInfo(again.python).canonicalFilePath(), QFileInfo(python_).canonicalFilePath());
  EXPECT_EQ(again.compare, r.compare);
  EXPECT_EQ(again.max_steps, 7) << "each run as long as the comparison's were";
  EXPECT_EQ(again.repeats, 1);
  EXPECT_EQ(again.warmup_steps, 4);
  EXPECT_EQ(again.profiled_steps, 1);
  EXPECT_EQ(again.session_path.toStdString(), again_path.toStdString());
  EXPECT_EQ(page->summaryModel()->rowCount(), 0) << "the older comparison is not shown as the new one";
  ASSERT_TRUE(waitForTheEnd());
  EXPECT_TRUE(outcome_->first) << outcome_->second.toStdString();
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        return page->comparisonPath() == again_path && repeats_of("bf16") == 1 && !window_.fileLoader()->isBusy();
      },
      std::chrono::seconds(60)));
  const profiler::Comparison rerun = profiler::read_comparison(again_path.toStdString());
  EXPECT_EQ(rerun.warmup_steps, 4);
  ASSERT_EQ(rerun.variants.size(), 2u);
  for (const auto& v : rerun.variants) {
    EXPECT_EQ(v.repeats.size(), 1u) << v.variant;
    EXPECT_EQ(v.profiled_steps, 1) << v.variant;
  }
  // And back to the built-in setup: Run trains the Run panel's settings again.
  page->compareBuiltInSetup();
  EXPECT_FALSE(page->scriptSubject().has_value());
  EXPECT_TRUE(page->findChild<QLabel*>(QStringLiteral("baseLabel"))->text().startsWith(QStringLiteral("Trains the")));
}

// A process that runs: not gone, and not a zombie nobody reaped yet.
bool processRuns(const std::string& pid) {
  const std::string stat = test::read_file("/proc/" + pid + "/stat");  // "" once gone
  const size_t name_end = stat.rfind(')');
  return name_end != std::string::npos && stat.size() > name_end + 2 && stat[name_end + 2] != 'Z';
}

// A comparison's runs are processes of `ampscope run --compare`'s own: Stop reaches the one
// training (as Ctrl-C in a terminal does), and a second Stop kills it with the comparison.
TEST_F(ScriptRun, StopReachesTheRunAComparisonWaitsForAndAKillLeavesNoRunBehind) {
  const std::string pid_file = (dir_ / "pid").string();
  for (const bool ignores_interrupt : {false, true}) {
    SCOPED_TRACE(ignores_interrupt ? "a run that ignores Ctrl-C, stopped twice" : "stopped once");
    fs::remove(pid_file);
    outcome_.reset();
    // It waits before training: only a signal ends it.
    const std::string waits = std::string("import os, signal, time\n") +
                              (ignores_interrupt ? "signal.signal(signal.SIGINT, signal.SIG_IGN)\n" : "") +
                              "open('" + pid_file + R"(', 'w').write(str(os.getpid()))
while True:
    time.sleep(0.01)
)";
    ScriptRunRequest r = request(waits + training_script(0));
    r.compare = {QStringLiteral("fp32"), QStringLiteral("bf16")};
    r.session_path = QString::fromStdString((dir_ / "compare.ampscope").string());
    ASSERT_TRUE(window_.runScript(r)) << window_.bannerText().toStdString();
    ASSERT_TRUE(testing::waitUntil([&] { return !test::read_file(pid_file).empty(); }, std::chrono::seconds(90)))
        << window_.scriptRunPane()->outputText().toStdString();
    const std::string run_pid = test::read_file(pid_file);
    ASSERT_TRUE(processRuns(run_pid));
    // The comparison page's Stop stops it, as the Run menu's does.
    auto* page_stop = window_.comparisonPage()->findChild<QPushButton*>(QStringLiteral("stopButton"));
    ASSERT_TRUE(page_stop && page_stop->isEnabled());
    EXPECT_TRUE(window_.comparisonPage()->progressText().startsWith(QStringLiteral("Running train.py's comparison")))
        << window_.comparisonPage()->progressText().toStdString();
    page_stop->click();
    if (ignores_interrupt) window_.stopRun();
    ASSERT_TRUE(waitForTheEnd());
    EXPECT_TRUE(outcome_->first) << outcome_->second.toStdString();
    EXPECT_TRUE(outcome_->second.startsWith(ignores_interrupt ? QStringLiteral("train.py was killed (Stop, twice)")
                                                              : QStringLiteral("train.py stopped (Stop)")))
        << outcome_->second.toStdString();
    EXPECT_TRUE(testing::waitUntil([&] { return !processRuns(run_pid); }, std::chrono::seconds(30)))
        << "the script's run (pid " << run_pid << ") trains on";
    EXPECT_FALSE(fs::exists(dir_ / "compare.ampscope")) << "no run finished";
    EXPECT_FALSE(page_stop->isEnabled());
    EXPECT_TRUE(window_.comparisonPage()->progressText().startsWith(QStringLiteral("The script's comparison ended")))
        << window_.comparisonPage()->progressText().toStdString();
  }
}

// A DDP script's ranks, started from the window as torchrun starts them (`ampscope run
// --nproc-per-node 2`): the window follows rank 0 while they run, shows the ranks side by side
// when they end, and each rank's session runs again as as many ranks.
TEST_F(ScriptRun, TorchrunsRanksRunFromTheWindowAndEndSideBySide) {
  ScriptRunRequest asked = request(R"(import torch, torch.distributed as dist
from torch import nn
dist.init_process_group("gloo")
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
for step in range(1, 5):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"rank {dist.get_rank()} step {step}", flush=True)
dist.destroy_process_group()
)",
                                   "ddp.py");
  asked.nproc_per_node = 2;
  QStringList followed;
  QObject::connect(window_.scriptRunner(), &ScriptRunner::sessionStarted,
                   [&](const QString& path) { followed << path; });
  ASSERT_TRUE(window_.runScript(asked)) << window_.bannerText().toStdString();
  const QString recording = window_.scriptRunPane()->stateText();
  EXPECT_TRUE(recording.endsWith(QStringLiteral("run.rank0.ampscope … run.rank1.ampscope (a file per rank)")))
      << recording.toStdString();
  ASSERT_TRUE(waitForTheEnd());
  EXPECT_TRUE(outcome_->first) << outcome_->second.toStdString() << "\n"
                               << window_.scriptRunPane()->outputText().toStdString();
  EXPECT_EQ(outcome_->second.toStdString(), "ddp.py finished: 2 ranks under torchrun, a session each "
                                            "(run.rank0.ampscope … run.rank1.ampscope)");
  const QString rank0 = QString::fromStdString((dir_ / "run.rank0.ampscope").string());
  const QString rank1 = QString::fromStdString((dir_ / "run.rank1.ampscope").string());
  EXPECT_EQ(followed, QStringList{rank0}) << "rank 0's session, followed as it began";
  auto* pages = window_.findChild<QTabWidget*>(QStringLiteral("pages"));
  ASSERT_NE(pages, nullptr);
  ASSERT_TRUE(testing::waitUntil([&] { return pages->currentWidget() == window_.ranksPage(); }))
      << window_.bannerText().toStdString();
  ASSERT_TRUE(testing::waitUntil([&] { return window_.ranksPage()->model()->rowCount() == 2; }));
  const QString output = window_.scriptRunPane()->outputText();
  EXPECT_TRUE(output.contains(QStringLiteral("rank 1 step 4"))) << output.toStdString();
  // `ampscope run --nproc-per-node` puts the ranks side by side once torchrun has ended.
  EXPECT_TRUE(output.contains(QStringLiteral("2 ranks\n"))) << output.toStdString();
  EXPECT_TRUE(output.contains(QStringLiteral("loss scale: the same on every rank at every step")))
      << output.toStdString();
  for (const QString& rank : {QStringLiteral("rank0"), QStringLiteral("rank1")}) {
    // Each rank's closing line whole, on a line of its own, though both write to one pipe.
    const QRegularExpression closing(QStringLiteral("^ampscope: session [^\\n]*run\\.%1\\.ampscope: 4 steps "
                                                    "\\(finished\\)[^\\n]*CPU\\)$")
                                         .arg(rank),
                                     QRegularExpression::MultilineOption);
    EXPECT_TRUE(closing.match(output).hasMatch()) << output.toStdString();
  }
  for (const QString& path : {rank0, rank1}) {
    const auto session = profiler::SessionReader::open(path.toStdString());
    EXPECT_EQ(session.steps().size(), 4u) << path.toStdString();
    const auto facts = profiler::script_facts(session.meta_values());
    ASSERT_TRUE(facts && facts->command) << path.toStdString();
    EXPECT_EQ(facts->command->world_size, 2);
    EXPECT_EQ(facts->command->rank, path == rank0 ? 0 : 1) << "the facts say which rank it was";
    const auto again = ScriptRunDialog::rerunRequest(*facts);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->nproc_per_node, 2) << "as many ranks again";
    EXPECT_TRUE(ScriptRunner::commandLine(QStringLiteral("ampscope"), *again).join(QLatin1Char(' ')).contains(
        QStringLiteral("--nproc-per-node 2 -- ")));
  }
}

// Stop reaches torchrun's ranks, which it starts in sessions of their own: Ctrl-C through
// torchrun closes each rank's session "stopped", and the window says the run stopped (torchrun
// itself exits 1 with a SignalException); a rank that ignores Ctrl-C is killed by the second
// Stop, not left training.
TEST_F(ScriptRun, StopReachesTorchrunsRanksAndAKillLeavesNoRankTraining) {
  // The ranks train apart (no collective), so one outlives the other by itself. With `deaf`,
  // rank 1 ignores Ctrl-C.
  ScriptRunRequest asked = request(R"(import itertools, os, signal, sys, torch, torch.distributed as dist
from torch import nn
dist.init_process_group("gloo")
rank = dist.get_rank()
model = nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 16)
for step in itertools.count(1):
    model(x).pow(2).mean().backward()
    opt.step()
    opt.zero_grad()
    if step == 3:
        if rank == 1 and sys.argv[1] == "deaf":
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        open(f"{sys.argv[1]}{rank}.tmp", "w").write(str(os.getpid()))
        os.rename(f"{sys.argv[1]}{rank}.tmp", f"{sys.argv[1]}{rank}")
)",
                                   "ranks.py");
  asked.nproc_per_node = 2;
  const auto final_state = [&](const std::string& file) {
    return profiler::SessionReader::open((dir_ / file).string()).meta_value(profiler::meta_key::kFinalState);
  };
  const auto pid_of = [&](const std::string& run, int rank) {
    return test::read_file(dir_ / (run + std::to_string(rank)));
  };
  const auto both_training = [&](const std::string& run) {
    return testing::waitUntil([&] { return !pid_of(run, 0).empty() && !pid_of(run, 1).empty(); },
                              std::chrono::seconds(90));
  };

  asked.arguments = {QStringLiteral("obey")};
  asked.session_path = QString::fromStdString((dir_ / "obey.ampscope").string());
  ASSERT_TRUE(window_.runScript(asked)) << window_.bannerText().toStdString();
  ASSERT_TRUE(both_training("obey")) << window_.scriptRunPane()->outputText().toStdString();
  window_.scriptRunner()->stop();
  ASSERT_TRUE(waitForTheEnd());
  EXPECT_TRUE(outcome_->first) << outcome_->second.toStdString();
  EXPECT_EQ(outcome_->second.toStdString(), "ranks.py stopped (Stop): 2 ranks under torchrun, a session each "
                                            "(obey.rank0.ampscope … obey.rank1.ampscope)");
  for (const char* file : {"obey.rank0.ampscope", "obey.rank1.ampscope"})
    EXPECT_EQ(final_state(file), "stopped") << file;

  outcome_.reset();
  asked.arguments = {QStringLiteral("deaf")};
  asked.session_path = QString::fromStdString((dir_ / "deaf.ampscope").string());
  ASSERT_TRUE(window_.runScript(asked)) << window_.bannerText().toStdString();
  ASSERT_TRUE(both_training("deaf")) << window_.scriptRunPane()->outputText().toStdString();
  const pid_t rank1 = static_cast<pid_t>(std::stol(pid_of("deaf", 1)));
  window_.scriptRunner()->stop();
  ASSERT_TRUE(testing::waitUntil([&] { return final_state("deaf.rank0.ampscope").has_value(); },
                                 std::chrono::seconds(60)))
      << window_.scriptRunPane()->outputText().toStdString();
  EXPECT_EQ(final_state("deaf.rank0.ampscope"), "stopped");
  EXPECT_TRUE(window_.scriptRunner()->isRunning()) << "rank 1 ignores Ctrl-C: torchrun waits for it";
  window_.scriptRunner()->stop();
  ASSERT_TRUE(waitForTheEnd());
  EXPECT_TRUE(outcome_->second.contains(QStringLiteral("killed"))) << outcome_->second.toStdString();
  // Gone, or a zombie nobody reaped yet (init in a container may not): not training.
  const auto training = [&] {
    const std::string stat = test::read_file("/proc/" + std::to_string(rank1) + "/stat");
    const size_t close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
  };
  EXPECT_TRUE(testing::waitUntil([&] { return !training(); }, std::chrono::seconds(10))) << "rank 1 still runs";
}

// `python -m pkg.train` from the package's root, as a package's training is often started.
TEST_F(ScriptRun, AModuleRunsFromItsWorkingDirectoryAsPythonMRunsIt) {
  fs::create_directories(dir_ / "pkg");
  test::write_file(dir_ / "pkg" / "__init__.py", "");
  // A relative import: only a module run as part of its package has one.
  test::write_file(dir_ / "pkg" / "steps.py", "STEPS = 3\n");
  std::string text = training_script(3);
  const std::string steps_line = "STEPS, GATE = 3, ''";
  ASSERT_NE(text.find(steps_line), std::string::npos);
  text.replace(text.find(steps_line), steps_line.size(), "from .steps import STEPS\nGATE = ''");
  test::write_file(dir_ / "pkg" / "train.py", text);
  ScriptRunRequest r = request("");
  r.module = true;
  r.script = QStringLiteral("pkg.train");
  r.working_dir = QString::fromStdString(dir_.path().string());
  ASSERT_TRUE(window_.runScript(r)) << window_.bannerText().toStdString();
  EXPECT_EQ(window_.scriptRunner()->scriptName(), QStringLiteral("pkg.train"));
  ASSERT_TRUE(waitForTheEnd());
  EXPECT_TRUE(outcome_->first) << outcome_->second.toStdString() << "\n"
                               << window_.scriptRunPane()->outputText().toStdString();
  ASSERT_TRUE(waitForTheClosedSession());
  EXPECT_EQ(stepsShown(), 3);
  EXPECT_EQ(profiler::SessionReader::open((dir_ / "run.ampscope").string()).steps().size(), 3u);
}

TEST_F(ScriptRun, AScriptThatRaisesSaysWhyInOneLineAndKeepsItsSession) {
  ASSERT_TRUE(window_.runScript(request(training_script(3, "", "raise RuntimeError('diverged at step 3')\n"))));
  ASSERT_TRUE(waitForTheEnd());
  EXPECT_FALSE(outcome_->first);
  const std::string banner = window_.bannerText().toStdString();
  EXPECT_NE(banner.find("train.py failed (exit status 1)"), std::string::npos) << banner;
  EXPECT_NE(banner.find("RuntimeError: diverged at step 3"), std::string::npos) << banner;
  EXPECT_EQ(banner.find('\n'), std::string::npos) << "one line";
  EXPECT_TRUE(window_.scriptRunPane()->outputText().contains(QStringLiteral("Traceback")));
  ASSERT_TRUE(waitForTheClosedSession());
  const auto session = profiler::SessionReader::open((dir_ / "run.ampscope").string());
  EXPECT_EQ(session.steps().size(), 3u);
  EXPECT_EQ(session.meta_value(profiler::meta_key::kFinalState), "failed");
  EXPECT_EQ(stepsShown(), 3);
}

TEST_F(ScriptRun, StopInterruptsTheScriptAsCtrlCDoesAndItsSessionClosesStopped) {
  ASSERT_TRUE(window_.runScript(request(training_script(0))));
  ASSERT_TRUE(testing::waitUntil([&] { return stepsShown() >= 2; }, std::chrono::seconds(90)))
      << window_.scriptRunPane()->outputText().toStdString();
  window_.stopRun();
  ASSERT_TRUE(waitForTheEnd());
  EXPECT_TRUE(outcome_->first) << outcome_->second.toStdString();
  EXPECT_TRUE(outcome_->second.startsWith(QStringLiteral("train.py stopped (Stop)"))) << outcome_->second.toStdString();
  ASSERT_TRUE(waitForTheClosedSession());
  const auto session = profiler::SessionReader::open((dir_ / "run.ampscope").string());
  EXPECT_EQ(session.meta_value(profiler::meta_key::kFinalState), "stopped");
  EXPECT_GE(session.steps().size(), 2u);
  EXPECT_EQ(stepsShown(), static_cast<int>(session.steps().size()));
}

TEST_F(ScriptRun, WhatCannotRunSaysWhyInOneLine) {
  ScriptRunRequest missing = request(training_script(1));
  missing.script = QString::fromStdString((dir_ / "no_such.py").string());
  EXPECT_FALSE(window_.runScript(missing));
  EXPECT_NE(window_.bannerText().toStdString().find("no_such.py' is not a file"), std::string::npos)
      << window_.bannerText().toStdString();

  ScriptRunRequest no_python = request(training_script(1));
  no_python.python = QString::fromStdString((dir_ / "bin" / "python3").string());
  ASSERT_TRUE(window_.runScript(no_python));
  ASSERT_TRUE(waitForTheEnd());
  EXPECT_FALSE(outcome_->first);
  const std::string banner = window_.bannerText().toStdString();
  EXPECT_NE(banner.find("cannot run Python '" + (dir_ / "bin" / "python3").string() + "'"), std::string::npos)
      << banner;
  EXPECT_NE(banner.find("it wrote no session"), std::string::npos) << banner;
  EXPECT_FALSE(fs::exists(dir_ / "run.ampscope"));

  ScriptRunRequest homeless = request(training_script(1));
  homeless.module = true;
  homeless.script = QStringLiteral("pkg.train");
  EXPECT_FALSE(window_.runScript(homeless));
  EXPECT_NE(window_.bannerText().toStdString().find("module pkg.train needs the directory to run it from"),
            std::string::npos)
      << window_.bannerText().toStdString();
}

// The dialog gives back what it was given: arguments with spaces and quotes survive the
// one line they are edited in (an empty argument does not: QProcess::splitCommand drops it).
TEST(ScriptRunDialogFields, AnArgumentWithSpacesAndQuotesSurvivesTheLine) {
  test::ScratchDir dir;
  test::write_file(dir / "train.py", "");
  ScriptRunRequest r;
  r.script = QString::fromStdString((dir / "train.py").string());
  r.arguments = {QStringLiteral("--name"), QStringLiteral("a b"), QStringLiteral("say \"hi\"")};
  r.precision = QStringLiteral("bf16");
  r.max_steps = 30;
  r.capture.every_n_steps = 5;  // ampscope run's sampling: what is not at its default is on the line
  r.capture.gradient_every = 0;
  r.capture.trace_gpu = false;
  r.session_path = QString::fromStdString((dir / "s.ampscope").string());
  ScriptRunDialog dialog;
  dialog.setRequest(r);
  const auto back = dialog.request();
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->arguments, r.arguments);
  EXPECT_EQ(back->precision, r.precision);
  EXPECT_EQ(back->max_steps, 30);
  EXPECT_EQ(back->capture, r.capture);
  EXPECT_EQ(back->session_path, r.session_path);
  EXPECT_EQ(ScriptRunner::commandLine(QStringLiteral("ampscope"), *back).mid(1),
            (QStringList{"run", "--out", r.session_path, "--force", "--precision", "bf16", "--max-steps", "30",
                         "--every", "5", "--grad-every", "0", "--no-gpu-trace", "--", r.script, "--name", "a b",
                         "say \"hi\""}));
}

// A session's (or comparison's) script, run again from the Run panel: the dialog opens with the
// script as it ran (Python, directory, arguments, precision, step limit, the capture's sampling and
// kernel tracing) and gives back the command that runs it so.
TEST(ScriptRunDialogFields, ARecordedScriptRunsAgainAsItRan) {
  test::ScratchDir dir;
  test::write_file(dir / "train.py", "");
  std::map<std::string, std::string> meta{{profiler::meta_key::kKind, profiler::meta_key::kKindPython},
                                          {profiler::meta_key::kScript, "train.py"},
                                          {profiler::meta_key::kPrecisionOverride, "bf16"},
                                          {profiler::meta_key::kMaxSteps, "5"},
                                          {profiler::meta_key::kOpWindowStart, "3"},
                                          {profiler::meta_key::kRangeSampleEvery, "0"},
                                          {profiler::meta_key::kTraceGpu, "0"}};
  meta[profiler::meta_key::kScriptCommand] = R"({"python": "/v/bin/python", "working_directory": ")" +
                                             dir.path().string() + R"(", "module": false, "script": "train.py",)"
                                             R"( "arguments": ["--lr", "1e-3"]})";
  const auto session = profiler::script_facts(meta);
  ASSERT_TRUE(session);
  const auto again = ScriptRunDialog::rerunRequest(*session);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->working_dir.toStdString(), dir.path().string()) << "its arguments are read from there";
  ScriptRunDialog dialog;
  dialog.setRequest(*again);
  const auto back = dialog.request();
  ASSERT_TRUE(back) << "a fresh session file, the rest as it ran";
  const QString script = QString::fromStdString((dir / "train.py").string());
  EXPECT_EQ(back->python, QStringLiteral("/v/bin/python"));
  EXPECT_EQ(back->working_dir, again->working_dir);
  EXPECT_EQ(ScriptRunner::commandLine(QStringLiteral("ampscope"), *back).mid(1),
            (QStringList{"run", "--out", back->session_path, "--force", "--precision", "bf16", "--max-steps", "5",
                         "--window-start", "3", "--grad-every", "0", "--no-gpu-trace", "--", script, "--lr", "1e-3"}));

  // A comparison of it: compared again in the same precisions.
  const auto compared = profiler::compared_script_facts(meta, {"fp32", "bf16"});
  ASSERT_TRUE(compared);
  const auto compare_again = ScriptRunDialog::rerunRequest(*compared);
  ASSERT_TRUE(compare_again);
  EXPECT_EQ(compare_again->compare, (QStringList{"fp32", "bf16"}));
  EXPECT_EQ(compare_again->capture, (profiler::CaptureSettings{.trace_gpu = false}))
      << "kernel tracing is the comparison's own (--no-gpu-trace); its runs' sampling is not to be set";
  EXPECT_EQ(ScriptRunner::commandLine(QStringLiteral("ampscope"), *compare_again).mid(1).join(QLatin1Char(' ')),
            QStringLiteral("run --out  --force --compare fp32,bf16 --repeats %1 --max-steps 5 --no-gpu-trace -- %2 "
                           "--lr 1e-3")
                .arg(profiler::ComparisonOptions{}.repeats)
                .arg(script));
  meta.erase(profiler::meta_key::kTraceGpu);  // a comparison written before it kept the flag: traced, as by default
  const auto older = profiler::compared_script_facts(meta, {"fp32", "bf16"});
  EXPECT_TRUE(ScriptRunDialog::rerunRequest(*older)->capture.trace_gpu);

  // torchrun's rank: its ranks again on this machine; one of ranks on several machines is not this window's.
  meta[profiler::meta_key::kScriptCommand] = R"({"python": "/v/bin/python", "working_directory": ")" +
                                             dir.path().string() + R"(", "module": false, "script": "train.py",)"
                                             R"( "arguments": [], "ranks": {"world_size": 2, "local_world_size": 2,)"
                                             R"( "rank": 1}})";
  EXPECT_EQ(ScriptRunDialog::rerunRequest(*profiler::script_facts(meta))->nproc_per_node, 2);
  // A comparison of a torchrun script: compared again with each run as many ranks, into one file.
  auto ranks_compared = ScriptRunDialog::rerunRequest(*profiler::compared_script_facts(meta, {"fp32", "bf16"}));
  ASSERT_TRUE(ranks_compared);
  EXPECT_EQ(ranks_compared->nproc_per_node, 2);
  ranks_compared->session_path = QStringLiteral("c.ampscope");
  EXPECT_EQ(ranks_compared->sessionPaths(), QStringList{QStringLiteral("c.ampscope")});
  const QString compare_line = ScriptRunner::commandLine(QStringLiteral("ampscope"), *ranks_compared).join(' ');
  EXPECT_TRUE(compare_line.contains(
      QStringLiteral("--compare fp32,bf16 --repeats %1 --max-steps 5 --nproc-per-node 2 -- ")
          .arg(profiler::ComparisonOptions{}.repeats)))
      << compare_line.toStdString();
  meta[profiler::meta_key::kScriptCommand] = R"({"python": "/v/bin/python", "working_directory": ")" +
                                             dir.path().string() + R"(", "module": false, "script": "train.py",)"
                                             R"( "arguments": [], "ranks": {"world_size": 4, "local_world_size": 2,)"
                                             R"( "rank": 1}})";
  EXPECT_FALSE(ScriptRunDialog::rerunRequest(*profiler::script_facts(meta)));

  meta.erase(profiler::meta_key::kScriptCommand);  // a file from before sessions said how
  EXPECT_FALSE(ScriptRunDialog::rerunRequest(*profiler::script_facts(meta)));
}

// A module's precision comparison: what the dialog shows comes back as the command that
// `ampscope run` takes; what cannot run is said in the dialog, not after.
TEST(ScriptRunDialogFields, AModulesComparisonComesBackAsTheCommandThatRunsIt) {
  test::ScratchDir dir;
  ScriptRunRequest r;
  r.script = QStringLiteral("pkg.train");
  r.module = true;
  r.working_dir = QString::fromStdString(dir.path().string());
  r.arguments = {QStringLiteral("--epochs"), QStringLiteral("1")};
  r.compare = {QStringLiteral("fp32"), QStringLiteral("fp16")};
  r.repeats = 2;
  r.capture.every_n_steps = 4;  // the last profiled run's, still in the form
  r.session_path = QString::fromStdString((dir / "c.ampscope").string());
  ScriptRunDialog dialog;
  dialog.setRequest(r);
  auto back = dialog.request();
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(back->module);
  EXPECT_EQ(back->script, r.script);
  EXPECT_EQ(back->compare, r.compare);
  EXPECT_EQ(back->repeats, 2);
  EXPECT_EQ(back->working_dir, r.working_dir);
  // No --precision nor sampling flag: the comparison sets each run's, and `ampscope run` refuses them
  // beside --compare.
  EXPECT_EQ(ScriptRunner::commandLine(QStringLiteral("ampscope"), *back).mid(1).join(QLatin1Char(' ')).toStdString(),
            "run --out " + r.session_path.toStdString() +
                " --force --compare fp32,fp16 --repeats 2 -m -- pkg.train --epochs 1");

  const auto refused = [&](ScriptRunRequest changed, const std::string& why) {
    dialog.setRequest(changed);
    EXPECT_FALSE(dialog.request().has_value()) << why;
  };
  ScriptRunRequest one = r;
  one.compare = {QStringLiteral("bf16")};
  refused(one, "one precision is no comparison");
  ScriptRunRequest no_dir = r;
  no_dir.working_dir.clear();
  refused(no_dir, "a module without the directory it runs from");
  ScriptRunRequest bad_name = r;
  bad_name.script = QStringLiteral("pkg/train.py");
  refused(bad_name, "a path is not a module name");
  ScriptRunRequest all_warmup = r;
  all_warmup.max_steps = 5;
  refused(all_warmup, "no step left to time after the warm-up");
}

}  // namespace
}  // namespace ampscope::ui
