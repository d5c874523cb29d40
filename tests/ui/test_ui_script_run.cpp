// File → Run a Python script: the user's own training script run from the GUI under
// capture (`ampscope run`, a process of its own). The window opens the session the
// script writes and follows it while it runs; the Script pane shows what it printed;
// Stop stops it as Ctrl-C does; what fails says why in one line and keeps the session.
#include "profiler/session_meta_keys.h"
#include "profiler/store/session_reader.h"
#include "tests/support/test_support.h"
// Qt from here on.
#include <qcustomplot.h>

#include <QLabel>
#include <QSettings>

#include "tests/ui/qt_test_env.h"
#include "tests/ui/window_files.h"
#include "ui/models/store_session_io.h"
#include "ui/widgets/live_plots.h"
#include "ui/widgets/main_window.h"
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
  ASSERT_TRUE(window_.runScript(request(training_script(5, gate)))) << window_.bannerText().toStdString();
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
  r.trace_gpu = false;
  r.session_path = QString::fromStdString((dir / "s.ampscope").string());
  ScriptRunDialog dialog;
  dialog.setRequest(r);
  const auto back = dialog.request();
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->arguments, r.arguments);
  EXPECT_EQ(back->precision, r.precision);
  EXPECT_EQ(back->max_steps, 30);
  EXPECT_FALSE(back->trace_gpu);
  EXPECT_EQ(back->session_path, r.session_path);
  EXPECT_EQ(ScriptRunner::commandLine(QStringLiteral("ampscope"), *back).mid(1),
            (QStringList{"run", "--out", r.session_path, "--force", "--precision", "bf16", "--max-steps", "30",
                         "--no-gpu-trace", "--", r.script, "--name", "a b", "say \"hi\""}));
}

}  // namespace
}  // namespace ampscope::ui
