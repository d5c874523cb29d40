// torch.compile per block (torchtitan's and transformers' recipe) under `ampscope run`, on
// the CPU: torchvision's ResNet-18 and a small GPT-2 from transformers' config, whose blocks
// are compiled one by one, in place (`block.compile()`) or as compiled modules put in their place
// (`torch.compile(block)`). One graph serves every block alike; its ops belong to each
// block that ran it, as the eager run of the same script has them, and its inductor kernels
// say how many blocks ran them. And a model trained in
// bf16 itself, without autocast: no row says autocast decided or cast anything.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "profiler/store/session_reader.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::profiler::OpCategory;
using ampscope::profiler::OpStats;
using ampscope::profiler::Phase;
using ampscope::profiler::SessionReader;
using ampscope::test::ScratchDir;

constexpr int kSteps = 2;
// The steps the op table covers: step 1, the warm-up, is left out (profiler/analysis/warmup_step.h).
constexpr int kTableSteps = kSteps - 1;
const std::string kExample = std::string(AMPSCOPE_EXAMPLES_DIR) + "/compiled_bf16.py";

struct BlocksCase {
  const char* model;
  const char* mode;
  const char* forward_op;   // the blocks' GEMM or convolution, forward
  const char* backward_op;  // and its gradient's
};

void PrintTo(const BlocksCase& c, std::ostream* os) { *os << c.model << " " << c.mode; }

class CompiledBlocks : public ::testing::TestWithParam<BlocksCase> {
 protected:
  void SetUp() override {
    if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  }
  std::vector<OpStats> run(const std::string& example_args, const std::string& name) {
    const auto session = dir_ / name;
    const auto r = ampscope::test::ampscope(fmt::format("run --out '{}' '{}' --model {} --steps {} {}",
                                                        session.string(), kExample, GetParam().model, kSteps,
                                                        example_args));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return SessionReader::open(session.string()).op_stats();
  }
  ScratchDir dir_;
};

// The block a module is in: "transformer.h.1" of GPT-2's "transformer.h.1.mlp.c_fc", "layer1.1" of
// ResNet's "layer1.1.conv2"; "" outside the blocks.
std::string block_of(const std::string& module) {
  const int segments = module.starts_with("transformer.h.") ? 3 : module.starts_with("layer") ? 2 : 0;
  size_t end = 0;
  for (int i = 0; i < segments; ++i) {
    end = module.find('.', end + (i > 0));
    if (end == std::string::npos) return "";
  }
  return segments > 0 ? module.substr(0, end) : "";
}

// An op's calls per module in the blocks; compiled rows only, or eager rows only (whose
// autocast calls the same op again inside: only its modules are compared).
std::map<std::string, int64_t> block_ops(const std::vector<OpStats>& rows, bool compiled, const std::string& op,
                                         Phase phase) {
  std::map<std::string, int64_t> out;
  for (const auto& r : rows)
    if (r.compiled == compiled && r.name == op && r.phase == phase && !block_of(r.module).empty())
      out[r.module] += r.calls;
  return out;
}

// A model of `blocks` pre-norm MLP blocks alike and a head, torch imported and seeded: the
// start of the block scripts below.
std::string blocks_model(int blocks) {
  return fmt::format(R"(import sys, torch
from torch import nn
torch.manual_seed(0)
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(32)
        self.up = nn.Linear(32, 64)
        self.down = nn.Linear(64, 32)
    def forward(self, x):
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range({}))
        self.head = nn.Linear(32, 10)
    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)
)",
                     blocks);
}

std::set<std::string> modules_of(const std::map<std::string, int64_t>& calls) {
  std::set<std::string> out;
  for (const auto& [module, n] : calls) out.insert(module);
  return out;
}

// Blocks alike share one graph (ResNet's layer1.0 and layer1.1; GPT-2's blocks differ in the
// cache's state, so dynamo compiles the second again): before, a shared graph's ops were all
// the first block's, at twice its calls, and `block.compile()`'s regions the parent's.
TEST_P(CompiledBlocks, EachBlocksOpsAreItsOwnAsInTheEagerRun) {
  const BlocksCase c = GetParam();
  const auto eager = run("--eager --backend aot_eager", "eager.ampscope");
  const auto compiled = run(fmt::format("--backend aot_eager --compile {}", c.mode), "compiled.ampscope");

  const auto eager_forward = modules_of(block_ops(eager, false, c.forward_op, Phase::kForward));
  ASSERT_FALSE(eager_forward.empty());
  const auto compiled_forward = block_ops(compiled, true, c.forward_op, Phase::kForward);
  EXPECT_EQ(modules_of(compiled_forward), eager_forward) << "each block's own modules, as in eager";
  for (const auto& [module, calls] : compiled_forward) EXPECT_EQ(calls, kTableSteps) << module << ": once a step";
  std::set<std::string> blocks;
  for (const auto& module : eager_forward) blocks.insert(block_of(module));
  // The backward graph is shared too: each block's gradients are its own.
  std::set<std::string> backward_blocks;
  for (const auto& [module, calls] : block_ops(compiled, true, c.backward_op, Phase::kBackward)) {
    backward_blocks.insert(block_of(module));
    EXPECT_GT(calls, 0) << module;  // over the table's one step
  }
  EXPECT_EQ(backward_blocks, blocks);
  // Each block's compiled regions are its own, and no path holds torch.compile's wrapper.
  std::set<std::string> region_blocks;
  for (const auto& r : compiled) {
    EXPECT_EQ(r.module.find("_orig_mod"), std::string::npos) << r.name << " " << r.module;
    if (r.top_level && r.name.starts_with("Torch-Compiled Region") && r.phase == Phase::kForward)
      region_blocks.insert(r.module);
  }
  EXPECT_EQ(region_blocks, blocks);
}

INSTANTIATE_TEST_SUITE_P(
    FromConfigs, CompiledBlocks,
    ::testing::Values(BlocksCase{"resnet", "blocks", "aten::convolution", "aten::convolution_backward"},
                      BlocksCase{"gpt2", "blocks", "aten::addmm", "aten::mm"},
                      BlocksCase{"gpt2", "block-wrappers", "aten::addmm", "aten::mm"}),
    [](const ::testing::TestParamInfo<BlocksCase>& info) {
      std::string name = std::string(info.param.model) + "_" + info.param.mode;
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

// Three blocks compiled in place, with inductor. The first takes an input without autograd
// and gets a graph of its own; dynamo compiles again for the second (its input requires grad),
// and that graph serves the third too, its generated kernels one set for both. Each block's
// ops are its own; the shared graph's kernels name the block they were traced for and how
// many more ran them, and no kernel names the third. (PyTorch's own TransformerEncoderLayer
// would not do: `block.compile()` of a module whose code is all torch's compiles nothing.)
TEST(CompiledBlocksKernels, ASharedGraphsKernelsNameTheBlocksAlike) {
  if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  ScratchDir dir;
  const auto script = dir / "blocks.py";
  ampscope::test::write_file(script, blocks_model(3) + R"(model = Net()
for block in model.blocks:
    block.compile(dynamic=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(2):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(torch.randn(16, 32)), torch.randint(0, 10, (16,)))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
)");
  const auto session = dir / "blocks.ampscope";
  const auto r = ampscope::test::ampscope(fmt::format("run --out '{}' '{}'", session.string(), script.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto reader = SessionReader::open(session.string());
  std::map<std::string, int64_t> forward_gemms, backward_gemms;
  for (const auto& row : reader.op_stats()) {
    if (!row.compiled || !row.top_level) continue;
    if (row.phase == Phase::kForward && row.name == "aten::addmm") forward_gemms[row.module] += row.calls;
    if (row.phase == Phase::kBackward && row.name == "aten::mm") backward_gemms[row.module] += row.calls;
  }
  for (const std::string module : {"blocks.0.up", "blocks.0.down", "blocks.1.up", "blocks.1.down", "blocks.2.up",
                                   "blocks.2.down"}) {
    // Over the table's steps: step 1 is left out as warm-up.
    EXPECT_EQ(forward_gemms[module], kTableSteps) << module;
    EXPECT_EQ(backward_gemms[module], 2 * kTableSteps) << module << ": the input's and the weight's gradients";
  }
  std::map<std::string, int64_t> kernel_ops;  // the block a kernel's op names, and its suffix
  for (const auto& kernel : reader.compiled_kernels()) {
    for (const auto& op : kernel.ops) {
      const size_t suffix = op.module.find(" (");
      kernel_ops[op.module.substr(0, std::min(op.module.find('.', 7), suffix)) +
                 (suffix == std::string::npos ? "" : op.module.substr(suffix))] += 1;
    }
  }
  EXPECT_GT(kernel_ops["blocks.0"], 0) << "its own graph's kernels";
  EXPECT_GT(kernel_ops["blocks.1 (+1 alike)"], 0) << "the shared graph's kernels";
  EXPECT_EQ(kernel_ops.count("blocks.1"), 0u);
  EXPECT_EQ(kernel_ops.count("blocks.2"), 0u);
  EXPECT_EQ(kernel_ops.count("blocks.0 (+1 alike)"), 0u);
}

// Compiled code runs no module hooks (dynamo traces them into its graph): a module's output
// is measured only where its call runs outside a graph. Blocks and models compiled in place
// (`block.compile()`, `model.compile()`) and torch.compile's wrappers run their hooks around
// the compiled code: the capture's hooks are never compiled as frames of their own (dynamo's
// frame count is the bare script's). Each output reads as the eager run's of the same seed
// (aot_eager runs the same ATen ops); every module the eager run measured is measured, or
// named as inside a graph, in the summary, the JSON summary and the report. And a model
// compiled in place is a model call: its graphs' ops are in the forward, none is a graph
// module's own.
TEST(CompiledActivations, EachCallOutsideTheGraphsIsMeasuredAsInEagerAndTheRestIsNamed) {
  if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  ScratchDir dir;
  const auto script = dir / "blocks.py";
  ampscope::test::write_file(script, blocks_model(2) + R"(model, mode = Net(), sys.argv[1]
if mode == "blocks":
    for block in model.blocks:
        block.compile(backend="aot_eager")
elif mode == "block-wrappers":
    for i, block in enumerate(model.blocks):
        model.blocks[i] = torch.compile(block, backend="aot_eager")
elif mode == "model":
    model.compile(backend="aot_eager")
elif mode == "model-wrapper":
    model = torch.compile(model, backend="aot_eager")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(2):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(torch.randn(16, 32) * 100), torch.randint(0, 10, (16,)))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
print(f"frames dynamo compiled: {sum(torch._dynamo.utils.counters['frames'].values())}" if mode != "eager" else "")
)");
  // The frames dynamo compiled, as the script counts them: the capture's module hooks are
  // never among them (as frames of their own, each block call compiled and ran them too).
  auto frames_line = [](const std::string& output) {
    const size_t at = output.find("frames dynamo compiled: ");
    return at == std::string::npos ? std::string("(none)") : output.substr(at, output.find('\n', at) - at);
  };
  // module -> (dtype, max |x|) at the last sampled step
  auto measured = [&](const std::string& mode) {
    const auto session = dir / (mode + ".ampscope");
    const auto r = ampscope::test::ampscope(
        fmt::format("run --out '{}' --grad-every 1 '{}' {}", session.string(), script.string(), mode));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    if (mode != "eager") {
      std::string bare;
      const auto python = *ampscope::test::python_with_torch();
      EXPECT_EQ(ampscope::test::run_command(fmt::format("'{}' '{}' {} 2>&1", python, script.string(), mode), &bare), 0)
          << bare;
      EXPECT_NE(frames_line(bare), "(none)") << bare;
      EXPECT_EQ(frames_line(r.output), frames_line(bare)) << "as the script run without ampscope";
    }
    std::map<std::string, std::pair<std::string, double>> out;
    for (const auto& a : SessionReader::open(session.string()).activations(kSteps))
      out[a.module] = {a.dtype, a.max_abs};
    return out;
  };
  const auto eager = measured("eager");
  ASSERT_EQ(eager.size(), 10u) << "each block, its three modules, the head and the model";
  const std::map<std::string, std::set<std::string>> outside_graphs = {
      {"blocks", {"blocks.0", "blocks.1", "head", "Net"}},
      {"block-wrappers", {"blocks.0", "blocks.1", "head", "Net"}},
      {"model", {"Net"}},
      {"model-wrapper", {"Net"}}};
  for (const auto& [mode, expected] : outside_graphs) {
    SCOPED_TRACE(mode);
    const auto compiled = measured(mode);
    std::set<std::string> modules;
    for (const auto& [module, value] : compiled) {
      modules.insert(module);
      ASSERT_TRUE(eager.contains(module)) << module;
      EXPECT_EQ(value.first, eager.at(module).first) << module;
      EXPECT_NEAR(value.second, eager.at(module).second, 1e-3 * eager.at(module).second) << module;
    }
    EXPECT_EQ(modules, expected);

    // The rest of the eager run's modules are named as inside a graph: in the JSON summary,
    // and in the summary's and the report's words.
    const auto session = dir / (mode + ".ampscope");
    const auto json_path = dir / (mode + ".json");
    ASSERT_EQ(ampscope::test::ampscope(
                  fmt::format("export '{}' --format json -o '{}'", session.string(), json_path.string()))
                  .exit_code,
              0);
    std::ifstream json_in(json_path);
    const auto unmeasured =
        nlohmann::json::parse(json_in)["activations"]["unmeasured_compiled_modules"].get<std::vector<std::string>>();
    std::set<std::string> unmeasured_set(unmeasured.begin(), unmeasured.end());
    EXPECT_EQ(unmeasured_set.size(), unmeasured.size()) << "each once";
    std::set<std::string> all = modules;
    all.insert(unmeasured.begin(), unmeasured.end());
    std::set<std::string> eager_modules;
    for (const auto& [module, value] : eager) eager_modules.insert(module);
    EXPECT_EQ(all, eager_modules);
    const std::string words =
        fmt::format("outputs of {} modules inside torch.compile'd graphs are not measured", unmeasured.size());
    const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session.string()));
    EXPECT_NE(summary.output.find("The " + words), std::string::npos) << summary.output;
    const auto html = dir / (mode + ".html");
    ASSERT_EQ(ampscope::test::ampscope(fmt::format("report '{}' -o '{}'", session.string(), html.string())).exit_code,
              0);
    // (The apostrophe is escaped there.)
    EXPECT_NE(ampscope::test::read_file(html).find(words.substr(0, words.find('\''))), std::string::npos);

    for (const auto& row : SessionReader::open(session.string()).op_stats()) {
      EXPECT_NE(row.module, "GraphModule") << row.name;
      if (row.compiled && row.name == "aten::addmm") {
        EXPECT_EQ(row.phase, Phase::kForward) << row.module;
      }
    }
  }
}

// A TransformerEncoder whose layers are compiled in place, and its own Head with them or not.
std::string encoder_script(bool compile_head) {
  return fmt::format(R"(import torch
from torch import nn
torch.manual_seed(0)
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(32, 10)
    def forward(self, x):
        return self.proj(x.mean(dim=1))
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = Head()
    def forward(self, x):
        return self.head(self.encoder(x))
model = Net()
for layer in model.encoder.layers:
    layer.compile(backend="aot_eager")
if {}:
    model.head.compile(backend="aot_eager")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(2):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(torch.randn(4, 8, 32)), torch.randint(0, 10, (4,)))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
)",
                     compile_head ? "True" : "False");
}

// `module.compile()` of a module whose code is all PyTorch's compiles nothing: dynamo skips
// the module's _call_impl as PyTorch's own frame and compiles from the first frame outside
// PyTorch, which nn.TransformerEncoderLayer never reaches (torch.compile(module) would
// compile it). The session says which modules ran eagerly, in the summary, the JSON summary
// and the report; a block of the script's own compiled the same way is compiled, not listed.
TEST(CompiledInPlace, ModulesOfPyTorchsOwnCodeAreNamedAsRunEagerly) {
  if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  ScratchDir dir;
  const auto script = dir / "encoder.py";
  ampscope::test::write_file(script, encoder_script(/*compile_head=*/true));
  const auto session = dir / "encoder.ampscope";
  const auto r = ampscope::test::ampscope(fmt::format("run --out '{}' '{}'", session.string(), script.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The session's own evidence: the layers' GEMMs are eager rows, the head's a graph's.
  std::set<std::string> eager_gemms, compiled_gemms;
  for (const auto& row : SessionReader::open(session.string()).op_stats()) {
    if (row.phase != Phase::kForward || row.name != "aten::addmm") continue;
    (row.compiled ? compiled_gemms : eager_gemms).insert(row.module.substr(0, row.module.find('.', 15)));
  }
  EXPECT_TRUE(eager_gemms.contains("encoder.layers.0") && eager_gemms.contains("encoder.layers.1"));
  EXPECT_EQ(compiled_gemms, std::set<std::string>{"head.proj"});

  const auto json_path = dir / "encoder.json";
  ASSERT_EQ(
      ampscope::test::ampscope(fmt::format("export '{}' --format json -o '{}'", session.string(), json_path.string()))
          .exit_code,
      0);
  std::ifstream json_in(json_path);
  const auto ran_eagerly = nlohmann::json::parse(json_in)["compiled"]["ran_eagerly"];
  ASSERT_EQ(ran_eagerly.size(), 2u) << ran_eagerly.dump();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(ran_eagerly[i]["module"], fmt::format("encoder.layers.{}", i));
    EXPECT_EQ(ran_eagerly[i]["class"], "TransformerEncoderLayer");
  }
  const std::string words = "2 modules compiled in place ran eagerly (torch.compile compiled nothing in them): "
                            "TransformerEncoderLayer \u00d72 (encoder.layers.0, encoder.layers.1)";
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session.string()));
  EXPECT_NE(summary.output.find(words), std::string::npos) << summary.output;
  const auto html = dir / "encoder.html";
  ASSERT_EQ(ampscope::test::ampscope(fmt::format("report '{}' -o '{}'", session.string(), html.string())).exit_code, 0);
  EXPECT_NE(ampscope::test::read_file(html).find(words), std::string::npos);
}

// Where every module compiled in place ran eagerly, torch.compile compiled no graph: the
// compiled section says so, not "0 graphs read" above an explanation of graph ops there are none of.
TEST(CompiledInPlace, WhereNothingCompiledTheSessionSaysNoGraphWasRead) {
  if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  ScratchDir dir;
  const auto script = dir / "encoder.py";
  ampscope::test::write_file(script, encoder_script(/*compile_head=*/false));
  const auto session = dir / "encoder.ampscope";
  const auto r = ampscope::test::ampscope(fmt::format("run --out '{}' '{}'", session.string(), script.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const auto& row : SessionReader::open(session.string()).op_stats()) EXPECT_FALSE(row.compiled) << row.name;

  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session.string()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("Compiled (torch.compile): no AOTAutograd graph read\n"), std::string::npos)
      << summary.output;
  EXPECT_EQ(summary.output.find("ops of their forward and backward graphs"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("2 modules compiled in place ran eagerly"), std::string::npos) << summary.output;
  const auto html = dir / "encoder.html";
  ASSERT_EQ(ampscope::test::ampscope(fmt::format("report '{}' -o '{}'", session.string(), html.string())).exit_code, 0);
  const std::string report = ampscope::test::read_file(html);
  EXPECT_NE(report.find("No AOTAutograd graph read."), std::string::npos);
  EXPECT_EQ(report.find("the compiled regions' own rows"), std::string::npos);
}

// `model.compile()` and a model called at the top level of the loop, outside any autocast
// region: a model call, as an eager model's or torch.compile's wrapper's. Before, it was taken
// for a compiled function: its first call's region in no phase and no module, and step 1
// without a throughput.
TEST(CompiledInPlace, AModelCompiledInPlaceIsAModelCall) {
  if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  ScratchDir dir;
  const auto script = dir / "model.py";
  ampscope::test::write_file(script, R"(import torch
from torch import nn
torch.manual_seed(0)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(32, 64)
        self.head = nn.Linear(64, 10)
    def forward(self, x):
        return self.head(torch.relu(self.up(x)))
model = Net()
model.compile(backend="aot_eager")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(3):
    loss = nn.functional.cross_entropy(model(torch.randn(16, 32)), torch.randint(0, 10, (16,)))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
)");
  const auto session = dir / "model.ampscope";
  const auto r = ampscope::test::ampscope(fmt::format("run --out '{}' '{}'", session.string(), script.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto reader = SessionReader::open(session.string());
  int64_t region_calls = 0;
  for (const auto& row : reader.op_stats()) {
    if (!row.top_level || !row.name.starts_with("Torch-Compiled Region")) continue;
    region_calls += row.calls;
    EXPECT_EQ(row.phase, Phase::kForward) << row.name;
    EXPECT_EQ(row.module, "Net") << row.name;
  }
  EXPECT_EQ(region_calls, 2) << "steps 2 and 3: step 1 is left out as warm-up";
  const auto steps = reader.steps();
  ASSERT_EQ(steps.size(), 3u);
  for (const auto& step : steps) EXPECT_GT(step.samples_per_second, 0.0) << "step " << step.step;
}

// bf16 parameters and no autocast (torchtitan without FSDP's mixed precision): inductor
// decomposes LayerNorm and dropout into casts to fp32 and back, and multiplies LayerNorm's
// fp32 statistics by its bf16 weight; eager, the CPU's mean of ResNet's bf16 features sums
// into an fp32 out= tensor. Autocast was off: none of it is autocast's or a promotion.
TEST(CompiledWithoutAutocast, NoRowIsAutocastsDecisionOrCast) {
  if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  ScratchDir dir;
  for (const std::string run : {"--model gpt2 --compile blocks", "--model gpt2 --eager", "--model resnet --eager"}) {
    SCOPED_TRACE(run);
    const auto session = dir / "pure.ampscope";
    const auto r = ampscope::test::ampscope(fmt::format("run --force --out '{}' '{}' --steps {} --pure-bf16 {}",
                                                        session.string(), kExample, kSteps, run));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    int64_t compiled_rows = 0;
    for (const auto& row : SessionReader::open(session.string()).op_stats()) {
      compiled_rows += row.compiled;
      EXPECT_NE(row.category, OpCategory::kAutocastCast) << row.name << " " << row.module;
      EXPECT_NE(row.category, OpCategory::kDemoted) << row.name << " " << row.module;
      EXPECT_NE(row.category, OpCategory::kPromoted) << row.name << " " << row.module;
      EXPECT_NE(row.category, OpCategory::kKeptFp32) << row.name << " " << row.module;
    }
    EXPECT_EQ(compiled_rows > 0, run.find("--eager") == std::string::npos);
  }
}

}  // namespace
