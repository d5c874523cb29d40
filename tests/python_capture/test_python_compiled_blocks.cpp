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
#include <map>
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
  for (const auto& [module, calls] : compiled_forward) EXPECT_EQ(calls, kSteps) << module << ": once a step";
  std::set<std::string> blocks;
  for (const auto& module : eager_forward) blocks.insert(block_of(module));
  // The backward graph is shared too: each block's gradients are its own.
  std::set<std::string> backward_blocks;
  for (const auto& [module, calls] : block_ops(compiled, true, c.backward_op, Phase::kBackward)) {
    backward_blocks.insert(block_of(module));
    EXPECT_EQ(calls % kSteps, 0) << module << ": " << calls;
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
  ampscope::test::write_file(script, R"(import torch
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
        self.blocks = nn.ModuleList(Block() for _ in range(3))
        self.head = nn.Linear(32, 10)
    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)
model = Net()
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
    EXPECT_EQ(forward_gemms[module], kSteps) << module;
    EXPECT_EQ(backward_gemms[module], 2 * kSteps) << module << ": the input's and the weight's gradients";
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
