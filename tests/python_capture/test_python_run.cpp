// `ampscope run` and `import ampscope` when things go wrong, and the explicit API:
// one-line errors, the script's exit code, and a readable session whatever happened.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "profiler/analysis/warmup_step.h"
#include "profiler/capture_settings.h"
#include "profiler/session_meta_keys.h"
#include "profiler/store/session_reader.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::profiler::CaptureSettings;
namespace meta_key = ampscope::profiler::meta_key;
using ampscope::profiler::warmup_left_out_from_meta;
using ampscope::profiler::OpCategory;
using ampscope::profiler::OpStats;
using ampscope::profiler::Phase;
using ampscope::profiler::PhaseTotals;
using ampscope::profiler::SessionReader;
using ampscope::test::ScratchDir;
using ampscope::test::write_file;

constexpr const char* kSmallModel = "model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))";

// A few optimizer steps of a small fp16 loop; the tail decides how the script ends.
// `model`: Python that binds `model` (8 features in).
std::string loop_script(const std::string& tail, int steps = 3, const std::string& model = kSmallModel) {
  return fmt::format(R"(import sys, torch
from torch import nn
{}
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
for i in range({}):
    with torch.autocast("cpu", dtype=torch.float16):
        loss = model(torch.randn(4, 8)).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
{}
)",
                     model, steps, tail);
}

size_t lines(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

class PythonRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  }
  ampscope::test::CliResult run(const std::string& script_text, const std::string& flags = "") {
    write_file(dir_ / "train.py", script_text);
    return ampscope::test::ampscope(
        fmt::format("run --out '{}' {} '{}'", session().string(), flags, (dir_ / "train.py").string()));
  }
  std::filesystem::path session() const { return dir_ / "s.ampscope"; }
  ScratchDir dir_;
};

TEST_F(PythonRun, ReturnsTheScriptsExitCodeAndKeepsItsSteps) {
  const auto r = run(loop_script("sys.exit(3)"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  const auto s = SessionReader::open(session().string());
  EXPECT_EQ(s.steps().size(), 3u);
  EXPECT_EQ(s.meta_value("final_state").value_or(""), "failed");
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session().string()));
  EXPECT_NE(summary.output.find("  ended         failed: the script exited with status 3\n"), std::string::npos)
      << summary.output;
}

// `ampscope run`'s capture flags go through `python -m ampscope run` and the module's
// keywords to the profiler: the session says it was recorded with each of them.
TEST_F(PythonRun, EveryCaptureFlagIsWhatTheSessionWasRecordedWith) {
  const auto r = run(loop_script("", 4), "--window-start 2 --window-steps 2 --every 2 --grad-every 3 "
                                         "--sample-budget 0 --readiness-every 0 --no-gpu-trace");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  CaptureSettings recorded;
  ASSERT_TRUE(recorded.read_meta(SessionReader::open(session().string()).meta_values()));
  EXPECT_EQ(recorded, (CaptureSettings{.window_start = 2, .window_steps = 2, .every_n_steps = 2, .gradient_every = 3,
                                       .sample_budget_percent = 0, .readiness_every = 0, .trace_gpu = false}))
      << r.output;
}

TEST_F(PythonRun, AScriptThatRaisesClosesTheSessionAndSaysSoInOneLine) {
  const auto r = run(loop_script("raise ValueError('bad batch')"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("Traceback"), std::string::npos);  // the script's own traceback, as Python prints it
  EXPECT_NE(r.output.find("ampscope: the script raised ValueError: bad batch; session"), std::string::npos) << r.output;
  const auto s = SessionReader::open(session().string());
  EXPECT_EQ(s.steps().size(), 3u);
  EXPECT_GT(s.op_count(), 0);
  EXPECT_EQ(s.meta_value("final_state").value_or(""), "failed");
  EXPECT_EQ(s.meta_value("final_message").value_or(""), "ValueError: bad batch");
}

TEST_F(PythonRun, AStepCutShortAfterItsBackwardKeepsTheLossScaleItsBackwardUsed) {
  // The fourth step raises between its backward and scaler.step(): the session's last
  // step has the scale the loss was scaled by (GradScaler's own), not 1.
  const auto r = run(loop_script(R"(with torch.autocast("cpu", dtype=torch.float16):
    loss = model(torch.randn(4, 8)).float().pow(2).mean()
scaler.scale(loss).backward()
print("scale", scaler.get_scale())
raise RuntimeError("out of memory"))"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const size_t at = r.output.find("scale ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const double scale = std::stod(r.output.substr(at + 6));
  const auto steps = SessionReader::open(session().string()).steps();
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps.back().loss_scale, scale);
  EXPECT_EQ(steps.back().loss_scale, steps[2].loss_scale);  // GradScaler("cpu") at 65536, no skip on this tiny model
}

TEST_F(PythonRun, KeyboardInterruptStopsTheSession) {
  const auto r = run(loop_script("raise KeyboardInterrupt"));
  EXPECT_EQ(r.exit_code, 130) << r.output;
  EXPECT_EQ(SessionReader::open(session().string()).meta_value("final_state").value_or(""), "stopped");
}

TEST_F(PythonRun, MissingScriptIsAOneLineError) {
  const auto r = ampscope::test::ampscope(fmt::format("run --out '{}' '{}'", session().string(),
                                                      (dir_ / "nope.py").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.output), 1u) << r.output;
  EXPECT_NE(r.output.find("nope.py' not found"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(session()));
}

// Written as the command line that trains: the Python named before the script runs it
// (`ampscope run .venv/bin/python train.py`), -m runs a module as `python -m` does, and a
// "--" before the script is ampscope's while one after it is the script's own argument.
TEST_F(PythonRun, ACommandLineWithItsPythonAModuleOrASeparatorRunsAsPythonWould) {
  const std::string python = *ampscope::test::python_with_torch();
  std::filesystem::create_directory(dir_ / "pkg");
  write_file(dir_ / "pkg" / "__init__.py", "");
  write_file(dir_ / "pkg" / "train.py",
             loop_script(R"(print("argv", sys.argv[1:], __name__, __spec__ and __spec__.name))", 2));
  const auto in_dir = [&](const std::string& args) {
    ampscope::test::CliResult r;
    r.exit_code = ampscope::test::run_command(
        fmt::format("cd '{}' && '{}' {} 2>&1", dir_.path().string(), AMPSCOPE_CLI, args), &r.output);
    return r;
  };
  const auto module = in_dir(fmt::format("run --out m.ampscope -- '{}' -m pkg.train -- x --lr 1", python));
  ASSERT_EQ(module.exit_code, 0) << module.output;
  EXPECT_NE(module.output.find("argv ['--', 'x', '--lr', '1'] __main__ pkg.train"), std::string::npos)
      << module.output;
  const auto session = SessionReader::open((dir_ / "m.ampscope").string());
  EXPECT_EQ(session.steps().size(), 2u);
  EXPECT_EQ(session.meta_value("script"), (dir_ / "pkg" / "train.py").string())
      << "sys.argv[0], as python -m sets it";

  const auto script = in_dir("run --out s.ampscope --every 1 -- pkg/train.py a");
  ASSERT_EQ(script.exit_code, 0) << script.output;
  EXPECT_NE(script.output.find("argv ['a'] __main__ None"), std::string::npos) << script.output;

  const auto no_module = in_dir("run --out n.ampscope -m pkg.missing");
  EXPECT_EQ(no_module.exit_code, 2);
  EXPECT_EQ(lines(no_module.output), 1u) << no_module.output;
  EXPECT_NE(no_module.output.find("no module named 'pkg.missing'"), std::string::npos) << no_module.output;
  const auto no_python = in_dir("run --out p.ampscope /no/such/bin/python3 pkg/train.py");
  EXPECT_EQ(no_python.exit_code, 1);
  EXPECT_NE(no_python.output.find("cannot run Python '/no/such/bin/python3'"), std::string::npos) << no_python.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "n.ampscope"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "p.ampscope"));
}

TEST_F(PythonRun, UnwritableOrExistingOutIsAOneLineError) {
  write_file(dir_ / "train.py", loop_script(""));
  const auto unwritable = ampscope::test::ampscope(
      fmt::format("run --out '{}' '{}'", (dir_ / "no/such/dir/s.ampscope").string(), (dir_ / "train.py").string()));
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_EQ(lines(unwritable.output), 1u) << unwritable.output;
  EXPECT_NE(unwritable.output.find("does not exist"), std::string::npos) << unwritable.output;

  ASSERT_EQ(run(loop_script("")).exit_code, 0);
  const auto again = run(loop_script(""));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.output.find("exists; add --force"), std::string::npos) << again.output;
  EXPECT_EQ(SessionReader::open(session().string()).steps().size(), 3u);  // the earlier session is intact
  EXPECT_EQ(run(loop_script(""), "--force").exit_code, 0);
}

TEST_F(PythonRun, NestedCaptureIsAOneLineErrorAndTheOuterSessionSurvives) {
  const auto r = run(loop_script(fmt::format("import ampscope\nwith ampscope.capture('{}'):\n    pass",
                                             (dir_ / "inner.ampscope").string())));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("captures cannot nest"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("Traceback"), std::string::npos) << r.output;
  EXPECT_EQ(SessionReader::open(session().string()).steps().size(), 3u);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "inner.ampscope"));
}

// A forward no hook of the capture's sees: a functional model (no nn.Module, no autocast
// region), as torch.func code or a function compiled before the capture began has. Steps
// ended where the next one began at a model call or AMP region, so the whole run was one
// step, its losses summed. The next backward after an optimizer stepped now ends the step.
TEST_F(PythonRun, ABackwardAfterTheOptimizerSteppedEndsTheStepWhereNoForwardWasSeen) {
  const auto r = run(R"(import torch
torch.manual_seed(0)
w1 = torch.randn(8, 16, requires_grad=True)
w2 = torch.randn(16, 1, requires_grad=True)
opt = torch.optim.SGD([w1, w2], lr=0.01)
losses = []
for i in range(4):
    loss = (torch.randn(4, 8) @ w1).tanh().matmul(w2).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    losses.append(loss.item())
print("losses", " ".join(f"{x:.6f}" for x in losses))
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto s = SessionReader::open(session().string());
  const auto steps = s.steps();
  ASSERT_EQ(steps.size(), 4u) << r.output;
  std::istringstream printed(r.output.substr(r.output.find("losses ") + 7));
  for (const auto& step : steps) {
    double loss = 0;
    printed >> loss;
    EXPECT_NEAR(step.loss, loss, 1e-5) << "step " << step.step;
  }
  EXPECT_EQ(s.optimizer_steps().size(), 4u);
}

TEST_F(PythonRun, ExplicitApiWithWatchAndStep) {
  // ampscope.step() ends steps (a hand-written SGD update: no torch.optim to hook) and
  // watch() names the model in module paths.
  write_file(dir_ / "explicit.py", fmt::format(R"(import torch, ampscope
from torch import nn
model = ampscope.watch(nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)), name="net")
losses = []
with ampscope.capture("{0}", grad_every=2, sample_budget=0, trace_gpu=False) as capture:
    for i in range(5):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(torch.randn(4, 8)).float().pow(2).mean()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
                p.grad = None
        ampscope.step(loss=loss)
        losses.append(loss.item())
try:
    capture.start()
except ampscope.CaptureError as e:
    print("again:", e)
print("losses", " ".join(f"{{x:.6f}}" for x in losses))
)",
                                               session().string()));
  std::string out;
  const int rc = ampscope::test::run_command(
      fmt::format("PYTHONPATH='{}' '{}' '{}' 2>&1", AMPSCOPE_PYTHON_PACKAGE_DIR,
                  *ampscope::test::python_with_torch(), (dir_ / "explicit.py").string()),
      &out);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("again: this ampscope.capture"), std::string::npos) << out;
  const auto s = SessionReader::open(session().string());
  const auto steps = s.steps();
  ASSERT_EQ(steps.size(), 5u);
  const auto printed = out.substr(out.find("losses ") + 7);
  std::istringstream in(printed);
  for (const auto& step : steps) {
    double loss = 0;
    in >> loss;
    EXPECT_NEAR(step.loss, loss, 1e-5) << "step " << step.step;
  }
  EXPECT_EQ(s.meta().precision, "bf16");
  CaptureSettings recorded;  // the keywords, the rest their defaults
  ASSERT_TRUE(recorded.read_meta(s.meta_values()));
  EXPECT_EQ(recorded, (CaptureSettings{.gradient_every = 2, .sample_budget_percent = 0, .trace_gpu = false}));
  bool named = false;
  for (const auto& r : s.op_stats()) named |= r.name == "aten::linear" && r.module == "net.2";
  EXPECT_TRUE(named);
}

// Building a model initialises its weights (nn.Linear's reset_parameters: uniform_), and
// scripts build tables and load data before their loop: set-up, not step 1's work. Recorded,
// a large model's initialisation led the op table of a short run. Step 1 begins at the first
// model call or autocast region, and its batch (made inside the autocast region) is its own.
TEST_F(PythonRun, SetUpBeforeTheFirstModelCallIsNoStepsWork) {
  const auto r = run(loop_script("", 3, std::string(kSmallModel) +
                                            "\nwith torch.no_grad():\n    model[0].weight.normal_()"
                                            "\ntable = torch.arange(1000).float().cumsum(0)"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto s = SessionReader::open(session().string());
  std::map<std::string, int64_t> calls;  // every recorded call the script made, step 1's too
  for (const auto& op : s.ops())
    if (op.parent_id == 0) ++calls[op.name];
  for (const char* setup : {"aten::uniform_", "aten::normal_", "aten::arange", "aten::cumsum"})
    EXPECT_EQ(calls.count(setup), 0u) << setup << " was recorded as a step's op";
  EXPECT_EQ(calls["aten::linear"], 6) << "two layers in each of the 3 steps";
  EXPECT_EQ(calls["aten::randn"], 3) << "each step's batch, the first step's too";
  ASSERT_EQ(s.steps().size(), 3u);
}

// The calls of each top-level op outside any module, per phase: where the script's own
// lines (a loss, a seed gradient, clipping) were counted.
std::map<std::string, std::map<Phase, int64_t>> calls_per_phase(const SessionReader& s) {
  std::map<std::string, std::map<Phase, int64_t>> phases;
  for (const auto& row : s.op_stats())
    if (row.top_level && row.module.empty()) phases[row.name][row.phase] += row.calls;
  return phases;
}

// The steps the op table covers: a 3-step loop's steps 2 and 3 (step 1, the warm-up, is left
// out of it: profiler/analysis/warmup_step.h).
int64_t table_steps(const SessionReader& s) {
  const int64_t steps = std::stoll(s.meta_value(meta_key::kProfiledSteps).value_or("0"));
  EXPECT_TRUE(warmup_left_out_from_meta(s.meta_values()).has_value());
  return steps;
}

// The script's own autocast region is its forward pass (AMP's documentation has it wrap the
// model call and the loss): ops there outside any module are forward, not "other". Without
// a GradScaler a step ends at the next model call, inside that region: its loss still is.
// backward() is the backward pass wherever the script calls it.
TEST_F(PythonRun, TheLossComputedInTheScriptsAutocastRegionIsTheForwardPass) {
  const auto r = run(R"(import torch
from torch import nn
import torch.nn.functional as F
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 8), torch.randn(4, 2)
for i in range(3):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = F.mse_loss(model(x), y)
        loss.backward()
    opt.step()
    loss.detach().abs()
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto s = SessionReader::open(session().string());
  auto phases = calls_per_phase(s);
  const int64_t n = table_steps(s);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(phases["aten::mse_loss"], (std::map<Phase, int64_t>{{Phase::kForward, n}}));
  EXPECT_EQ(phases["aten::ones_like"], (std::map<Phase, int64_t>{{Phase::kBackward, n}}));
  EXPECT_EQ(phases["aten::abs"], (std::map<Phase, int64_t>{{Phase::kOther, n}})) << "after the region";
}

// Outside any autocast region (accelerate wraps only the model's forward in one; an fp32 loop
// has none), what autograd records is the forward pass, its backward the step's: the loss,
// the output's cast to fp32, a regularisation term, the loss divided for accumulation, and
// the ops inside them. What it records nothing for (a metric, .item()) stays "other".
TEST_F(PythonRun, TheLossComputedOutsideAutocastIsTheForwardPassWhereAutogradRecordsIt) {
  const auto r = run(R"(import torch
from torch import nn
import torch.nn.functional as F
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
model.forward = torch.autocast("cpu", dtype=torch.bfloat16)(model.forward)  # as accelerate wraps it
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 8), torch.randint(0, 4, (4,))
for i in range(3):
    out = model(x).float()
    loss = F.cross_entropy(out, y) / 2 + 1e-4 * model[0].weight.pow(2).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
    correct = (out.argmax(1) == y).count_nonzero().item()
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto s = SessionReader::open(session().string());
  auto phases = calls_per_phase(s);
  const int64_t n = table_steps(s);
  EXPECT_EQ(n, 2);
  const std::map<Phase, int64_t> other{{Phase::kOther, n}};
  // (Their backward nodes run to, div and pow again: in the backward.)
  for (const char* op : {"aten::to", "aten::cross_entropy_loss", "aten::div", "aten::pow", "aten::sum", "aten::add"}) {
    EXPECT_EQ(phases[op][Phase::kForward], n) << op;
    EXPECT_EQ(phases[op].count(Phase::kOther), 0u) << op;
  }
  for (const char* op : {"aten::argmax", "aten::eq", "aten::count_nonzero", "aten::item"})
    EXPECT_EQ(phases[op], other) << op;
  std::map<Phase, int64_t> inner;  // cross_entropy's own ops
  for (const auto& row : s.op_stats())
    if (!row.top_level && (row.name == "aten::_log_softmax" || row.name == "aten::nll_loss_forward"))
      inner[row.phase] += row.calls;
  EXPECT_EQ(inner, (std::map<Phase, int64_t>{{Phase::kForward, 2 * n}})) << "inside the loss";
}

// clip_grad_value_ clips as clip_grad_norm_ does, in the optimizer phase; torch.autograd.grad
// is a backward pass as backward() is (its seed gradient was "other").
TEST_F(PythonRun, ClipGradValueIsTheOptimizersAndAutogradGradTheBackwards) {
  const auto r = run(R"(import torch
from torch import nn
model = nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 8)
for i in range(3):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    (g,) = torch.autograd.grad(loss, [model.weight], create_graph=True)
    (loss + g.abs().sum()).backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), 0.01)
    opt.step()
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto s = SessionReader::open(session().string());
  auto phases = calls_per_phase(s);
  const int64_t n = table_steps(s);
  EXPECT_EQ(n, 2);
  // One foreach clamp of each bound over both gradients (the CPU has foreach kernels).
  EXPECT_EQ(phases["aten::_foreach_clamp_min_"], (std::map<Phase, int64_t>{{Phase::kOptimizer, n}}));
  EXPECT_EQ(phases["aten::_foreach_clamp_max_"], (std::map<Phase, int64_t>{{Phase::kOptimizer, n}}));
  EXPECT_EQ(phases["aten::ones_like"], (std::map<Phase, int64_t>{{Phase::kBackward, n * 2}}))
      << "autograd.grad's seed and backward()'s";
}

// AMP's documentation: where an op is sensitive, turn autocast off inside the region and give
// it fp32 inputs (or run a teacher in fp32). Autocast did not decide those ops, the script
// did: "autocast_off", not "unchanged". Autocast turned on again inside, and after the region,
// decides as before; an autocast(enabled=False) with no region around it turns nothing off.
TEST_F(PythonRun, OpsWhereTheScriptTurnedAutocastOffAreItsChoiceNotUnchanged) {
  const auto r = run(R"(import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj, self.head = nn.Linear(8, 16), nn.Linear(16, 2)
    def forward(self, x):
        h = self.proj(x)
        with torch.autocast("cpu", enabled=False):
            gram = h.float() @ h.float().t()
            with torch.autocast("cpu", dtype=torch.bfloat16):
                side = self.head(h)
        return self.head(h) + side + gram.mean()
model, teacher = Net(), nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(3):
    x = torch.randn(4, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with torch.autocast("cpu", enabled=False), torch.no_grad():
            target = teacher(x)
        loss = (model(x).float() - target).pow(2).mean()
    with torch.autocast("cpu", enabled=False):
        loss = loss + torch.mm(torch.randn(4, 4), torch.randn(4, 4)).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Calls per category of each top-level op outside the backward and the optimizer: "op" and,
  // for the layers, "op module".
  std::map<std::string, std::map<OpCategory, int64_t>> forward, head_inner;
  const auto s = SessionReader::open(session().string());
  const int64_t n = table_steps(s);
  EXPECT_EQ(n, 2);
  for (const auto& row : s.op_stats()) {
    if (row.phase == Phase::kBackward || row.phase == Phase::kOptimizer) continue;
    if (row.top_level)
      forward[row.name == "aten::linear" ? row.name + " " + row.module : row.name][row.category] += row.calls;
    else if (row.module == "model.head")
      head_inner[row.name][row.category] += row.calls;
  }
  EXPECT_EQ(forward["aten::matmul"], (std::map<OpCategory, int64_t>{{OpCategory::kAutocastOff, n}}));
  EXPECT_EQ(forward["aten::to"], (std::map<OpCategory, int64_t>{{OpCategory::kExplicitCast, 3 * n}}))
      << "h.float() twice a step, and the output's .float(): the script's casts";
  EXPECT_EQ(forward["aten::linear model.proj"], (std::map<OpCategory, int64_t>{{OpCategory::kDemoted, n}}));
  // Without a GradScaler a step starts at its first model call: here the teacher's, inside the
  // region turned off. The new step keeps the region as it is.
  EXPECT_EQ(forward["aten::linear teacher"], (std::map<OpCategory, int64_t>{{OpCategory::kAutocastOff, n}}));
  EXPECT_EQ(forward["aten::linear model.head"], (std::map<OpCategory, int64_t>{{OpCategory::kDemoted, 2 * n}}))
      << "autocast on again inside the region, and after it";
  // Inside autocast's kernel (autocast's own key masked, as in every region) its casts, then
  // the linear in bf16: its work, never ops where the script turned autocast off. The weight
  // and bias are cast once a step: the second call reuses autocast's cache of them.
  EXPECT_EQ(head_inner["aten::linear"], (std::map<OpCategory, int64_t>{{OpCategory::kUnchanged, 2 * n}}));
  EXPECT_EQ(head_inner["aten::to"], (std::map<OpCategory, int64_t>{{OpCategory::kAutocastCast, 2 * n}}));
  EXPECT_EQ(forward["aten::mm"], (std::map<OpCategory, int64_t>{{OpCategory::kUnchanged, n}}))
      << "after the region: autocast(enabled=False) with no region around it turned nothing off";
}

std::set<std::string> linear_modules(const SessionReader& s) {
  std::set<std::string> modules;
  for (const auto& r : s.op_stats())
    if (r.name == "aten::linear") modules.insert(r.module);
  return modules;
}

TEST_F(PythonRun, APartOfTheModelCalledOnItsOwnIsNamedAsTheModelNamesIt) {
  // The loop calls the model's parts, not the model: their paths are the model's.
  const auto r = run(R"(import torch
from torch import nn
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(2):
    loss = model[2](model[1](model[0](torch.randn(4, 8)))).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto s = SessionReader::open(session().string());
  EXPECT_EQ(linear_modules(s), (std::set<std::string>{"0", "2"}));
  EXPECT_NE(s.meta().model.find("Sequential (178 parameters)"), std::string::npos) << s.meta().model;
}

TEST_F(PythonRun, EachOfSeveralModelsIsNamedAsTheScriptNamesIt) {
  // A student and a teacher (called first), a loss module and a compiled-style wrapper
  // that are not models of their own.
  const auto r = run(R"(import torch
from torch import nn
class Wrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
student = nn.Sequential(nn.Linear(8, 4))
teacher = nn.Sequential(nn.Linear(8, 4))
wrapped = Wrapper(student)
loss_fn = nn.MSELoss()
opt = torch.optim.SGD(student.parameters(), lr=0.1)
for i in range(2):
    x = torch.randn(4, 8)
    with torch.no_grad():
        target = teacher(x)
    loss = loss_fn(student(x), target)
    loss.backward()
    opt.step()
    opt.zero_grad()
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto s = SessionReader::open(session().string());
  EXPECT_EQ(linear_modules(s), (std::set<std::string>{"teacher.0", "student.0"}));
}

TEST_F(PythonRun, ACheckpointedBlocksLayersAreRowsOfTheirOwnInTheirModule) {
  // checkpoint(use_reentrant=True) runs the block inside a custom autograd Function, and
  // again inside that Function's backward node, whose backward runs the block's nodes;
  // use_reentrant=False (PyTorch's advice) recomputes it inside whichever backward node first
  // needs a saved tensor. Called from a submodule, as HF's decoder stacks call it. Each time
  // its Linear is body.block.lin's, demoted by autocast like the Linears around it; its RMS
  // norm's casts to fp32 and back (Llama's) are the code's, as they are without checkpoint,
  // and the gradients of its promoted ops' fp16 inputs cast back are the promotions'. The
  // recomputation is a phase of its own: checkpointing's price, not the backward's work.
  for (const char* reentrant : {"True", "False"}) {
    SCOPED_TRACE(std::string("use_reentrant=") + reentrant);
    const auto r = run(loop_script("", 3, fmt::format(R"(from torch.utils.checkpoint import checkpoint
class RMSNorm(nn.Module):
    def forward(self, x):
        h = x.to(torch.float32)
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype)
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin, self.norm, self.scale = nn.Linear(16, 16), RMSNorm(), nn.Parameter(torch.ones(16))
    def forward(self, x):
        h = self.lin(x)
        return self.norm(h) + self.scale * h
class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.block, self.proj = Block(), nn.Linear(16, 16)
    def forward(self, x):
        h = checkpoint(self.block, x, use_reentrant={0})
        # tanh in no module of its own; proj's Linear saves the last tensor the backward needs,
        # so use_reentrant=False stops the recomputation inside it (it ends without outputs).
        return checkpoint(lambda t: self.proj(torch.tanh(t)), h, use_reentrant={0})
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp, self.body, self.out = nn.Linear(8, 16), Body(), nn.Linear(16, 2)
    def forward(self, x):
        return self.out(self.body(self.inp(x)))
model = Net())",
                                                      reentrant)),
                       "--force --grad-every 1 --sample-budget 0");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::map<std::pair<std::string, Phase>, std::set<OpCategory>> linears;  // (module, phase) -> categories
    std::map<std::pair<std::string, Phase>, std::set<OpCategory>> block_casts;
    bool checkpoint_row = false;
    std::set<Phase> tanh_phases;
    const SessionReader reader = SessionReader::open(session().string());
    EXPECT_EQ(reader.steps().size(), 3u);  // a recomputation is no model call of a new step
    const std::vector<OpStats> ops = reader.op_stats();
    std::set<Phase> phases;
    for (const PhaseTotals& p : ampscope::profiler::phase_totals(ops)) phases.insert(p.phase);
    EXPECT_EQ(phases, (std::set<Phase>{Phase::kForward, Phase::kBackward, Phase::kRecompute, Phase::kOptimizer}));
    for (const auto& op : ops) {
      if (!op.top_level) continue;
      checkpoint_row |= op.name == "CheckpointFunction";
      if (op.name == "aten::tanh" && op.module == "body") tanh_phases.insert(op.phase);
      if (op.name == "aten::linear") linears[{op.module, op.phase}].insert(op.category);
      if (op.name == "aten::to" && op.module.starts_with("body") && op.input_dtypes.front() != op.output_dtypes.front())
        block_casts[{op.module, op.phase}].insert(op.category);
    }
    EXPECT_FALSE(checkpoint_row);
    EXPECT_EQ(tanh_phases, (std::set<Phase>{Phase::kForward, Phase::kRecompute}));
    // Precision readiness reads the checkpointed Linear's operands as the others', once a
    // sample: in the forward, which use_reentrant=True runs under no_grad, not again recomputed.
    std::map<std::string, int64_t> input_elements;
    for (const auto& layer : reader.readiness().layers())
      for (const auto& t : layer.tensors)
        if (t.role == ampscope::profiler::TensorRole::input_activation)
          input_elements[layer.layer] = t.formats[0].elements;
    ASSERT_GT(input_elements["inp"], 0);
    EXPECT_EQ(input_elements["body.block.lin"], 2 * input_elements["inp"]);  // [4, 16] and [4, 8]
    const std::set<OpCategory> demoted{OpCategory::kDemoted};
    const std::map<std::pair<std::string, Phase>, std::set<OpCategory>> expected{
        {{"inp", Phase::kForward}, demoted},           {{"body.block.lin", Phase::kForward}, demoted},
        {{"body.block.lin", Phase::kRecompute}, demoted}, {{"body.proj", Phase::kForward}, demoted},
        {{"body.proj", Phase::kRecompute}, demoted},      {{"out", Phase::kForward}, demoted}};
    EXPECT_EQ(linears, expected);
    // The backward's: the gradients' casts back (the norm's the code's, the Linear's weight
    // and bias gradients back to fp32 autocast's casts' other half).
    const std::map<std::pair<std::string, Phase>, std::set<OpCategory>> expected_casts{
        {{"body.block.norm", Phase::kForward}, {OpCategory::kExplicitCast}},
        {{"body.block.norm", Phase::kRecompute}, {OpCategory::kExplicitCast}},
        {{"body.block.norm", Phase::kBackward}, {OpCategory::kExplicitCast}},
        {{"body.block", Phase::kBackward}, {OpCategory::kPromotionCast}},
        {{"body.block.lin", Phase::kBackward}, {OpCategory::kAutocastCast}},
        {{"body.proj", Phase::kBackward}, {OpCategory::kAutocastCast}}};
    EXPECT_EQ(block_casts, expected_casts);
  }
}

// model.bfloat16() trains in bf16 with no autocast: the session's precision is not "fp32",
// and under autocast the parameters' own precision is said too (no fp32 master weights).
TEST_F(PythonRun, AModelCastToBf16IsSaidToTrainInBf16WithoutMasterWeights) {
  const std::string script = R"(import sys, torch
from torch import nn
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to(torch.bfloat16)
opt = torch.optim.AdamW(model.parameters(), lr=0.01)
for i in range(2):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=AUTOCAST):
        loss = model(torch.randn(4, 8, dtype=torch.bfloat16)).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
)";
  for (const auto& [autocast, expected] :
       {std::pair{"False", "precision     bf16 parameters, no autocast (the model itself is bf16: no fp32 master "
                           "weights)\n"},
        std::pair{"True", "precision     bf16 autocast, on bf16 parameters (no fp32 master weights)\n"}}) {
    SCOPED_TRACE(std::string("autocast ") + autocast);
    std::string text = script;
    text.replace(text.find("AUTOCAST"), 8, autocast);
    const auto r = run(text, "--force");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(SessionReader::open(session().string()).meta_values().at("parameter_dtypes"), "bfloat16:178");
    const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session().string()));
    EXPECT_NE(summary.output.find(expected), std::string::npos) << summary.output;
  }
}

// AMP's region switched off (autocast(enabled=args.amp) with the flag off, around the step or
// the model's forward) trains in fp32, and says why; a layer's own guard (Llama's rotary
// angles under autocast(enabled=False)) in a run without autocast says nothing.
TEST_F(PythonRun, AnAutocastRegionEnteredDisabledIsAnFp32RunThatSaysSo) {
  const std::string script = R"(import contextlib, torch
from torch import nn
class Guarded(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
    def forward(self, x):
        with torch.autocast("cpu", enabled=False):
            x = x * 2
        return self.fc(x)
model = nn.Sequential(Guarded(), nn.ReLU(), nn.Linear(8, 2))
forward = model.forward
def forward_in_region(x):  # a forward decorated with the region
    with WRAPPED:
        return forward(x)
model.forward = forward_in_region
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for i in range(2):
    with OUTER:
        loss = model(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
)";
  const std::string off = "torch.autocast(\"cpu\", dtype=torch.float16, enabled=False)";
  const std::string none = "contextlib.nullcontext()";
  const std::string said = "precision     fp32: the script entered autocast with enabled=False (cpu)\n";
  const std::string unseen = "precision     fp32 (no autocast region seen)\n";
  for (const auto& [outer, wrapped, expected] : {std::tuple{off, none, said}, {none, off, said}, {none, none, unseen}}) {
    SCOPED_TRACE(outer + " around " + wrapped);
    std::string text = script;
    text.replace(text.find("OUTER"), 5, outer);
    text.replace(text.find("WRAPPED"), 7, wrapped);
    const auto r = run(text, "--force");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session().string()));
    EXPECT_NE(summary.output.find(expected), std::string::npos) << summary.output;
  }
}

// LoRA's shape: a frozen bf16 base, fp32 adapters trained. The optimizer updates fp32
// weights, so there are master weights: no warning, the precision is autocast's alone.
TEST_F(PythonRun, AFrozenBf16BaseUnderTrainedFp32AdaptersIsNoModelWithoutMasterWeights) {
  const auto r = run(R"(import torch
from torch import nn
class Adapted(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Linear(32, 32).to(torch.bfloat16).requires_grad_(False)
        self.down, self.up = nn.Linear(32, 2, bias=False), nn.Linear(2, 32, bias=False)
    def forward(self, x):
        return self.base(x) + self.up(self.down(x))
model = nn.Sequential(Adapted(), nn.ReLU(), Adapted())
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=0.01)
for i in range(2):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(torch.randn(4, 32)).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
)",
                     "--force");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(SessionReader::open(session().string()).meta_values().at("parameter_dtypes"), "float32:256");
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session().string()));
  EXPECT_NE(summary.output.find("precision     bf16 autocast\n"), std::string::npos) << summary.output;
  const auto report = dir_ / "r.html";
  ASSERT_EQ(ampscope::test::ampscope(fmt::format("report -o '{}' '{}'", report.string(), session().string())).exit_code,
            0);
  std::ifstream in(report);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(html.find("master weights"), std::string::npos);
}

TEST_F(PythonRun, AnotherTorchVersionIsRefusedBeforeTheModuleLoads) {
  // The built package with its recorded torch version changed, as if this torch were another.
  const std::filesystem::path package = dir_ / "pkg";
  std::filesystem::create_directories(package / "ampscope");
  std::filesystem::copy(std::filesystem::path(AMPSCOPE_PYTHON_PACKAGE_DIR) / "ampscope", package / "ampscope",
                        std::filesystem::copy_options::recursive);
  write_file(package / "ampscope" / "_build_info.py", "TORCH_VERSION = \"2.99.0\"\n");
  write_file(dir_ / "train.py", loop_script(""));
  std::string out;
  const int rc = ampscope::test::run_command(
      fmt::format("PYTHONPATH='{}' '{}' -m ampscope run --out '{}' '{}' 2>&1", package.string(),
                  *ampscope::test::python_with_torch(), session().string(), (dir_ / "train.py").string()),
      &out);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(lines(out), 1u) << out;
  EXPECT_NE(out.find("ampscope was built for torch 2.99.0 but this Python has torch"), std::string::npos) << out;
  std::string imported;
  ampscope::test::run_command(fmt::format("PYTHONPATH='{}' '{}' -c 'import ampscope' 2>&1", package.string(),
                                          *ampscope::test::python_with_torch()),
                              &imported);
  EXPECT_NE(imported.find("ImportError: ampscope was built for torch 2.99.0"), std::string::npos) << imported;
}

}  // namespace
