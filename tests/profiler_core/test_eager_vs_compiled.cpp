// The eager and the compiled run of one model side by side (issue 28), on op tables
// shaped as ampscope records them (the rows of examples/compiled_bf16.py's two runs):
// what matches, what differs, what only one run ran, and the time per phase.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "profiler/analysis/eager_vs_compiled.h"

namespace ampscope::profiler {
namespace {

OpStats row(std::string name, std::string module, Phase phase, std::vector<std::string> inputs,
            std::vector<std::string> outputs, OpCategory category = OpCategory::kUnchanged) {
  OpStats r;
  r.name = std::move(name);
  r.module = std::move(module);
  r.phase = phase;
  r.input_dtypes = std::move(inputs);
  r.output_dtypes = std::move(outputs);
  r.category = category;
  r.calls = 4;
  return r;
}

OpStats timed(OpStats r, int64_t cpu_ms, bool top_level = true) {
  r.cpu_time_ns = cpu_ms * 1'000'000;
  r.top_level = top_level;
  return r;
}

OpStats compiled(OpStats r) {
  r.compiled = true;
  r.top_level = true;
  return r;
}

const std::vector<std::string> kBf16Addmm{"bfloat16", "bfloat16", "bfloat16", "", ""};

// Eager: linear (the wrapper, where autocast's demotion shows) around addmm; the
// backward's mm. Two layers and a convolution.
std::vector<OpStats> eager_rows() {
  return {
      timed(row("aten::linear", "fc1", Phase::kForward, {"float32", "float32", "float32"}, {"bfloat16"},
                OpCategory::kDemoted),
            6),
      timed(row("aten::addmm", "fc1", Phase::kForward, kBf16Addmm, {"bfloat16"}), 5, false),
      timed(row("aten::linear", "fc2", Phase::kForward, {"bfloat16", "float32", "float32"}, {"bfloat16"},
                OpCategory::kDemoted),
            6),
      timed(row("aten::addmm", "fc2", Phase::kForward, kBf16Addmm, {"bfloat16"}), 5, false),
      timed(row("aten::mm", "fc1", Phase::kBackward, {"bfloat16", "bfloat16"}, {"bfloat16"}), 4),
      timed(row("aten::convolution", "conv", Phase::kForward, {"float32", "float32", ""}, {"float32"}), 8),
      timed(row("aten::_foreach_add_", "", Phase::kOptimizer, {"float32"}, {}), 2),
      // HF GPT-2's Conv1D calls addmm itself: recorded with the fp32 bias and weight
      // it was called with, then cast by autocast and run in bf16.
      timed(row("aten::addmm", "c_attn", Phase::kForward, {"float32", "bfloat16", "float32", "", ""}, {"bfloat16"},
                OpCategory::kDemoted),
            3),
  };
}

// Compiled: the graph's ops (no time), the region rows, the region's own extern
// call (no module, nested), and fc2 computed in float32 (as if a custom op kept it).
std::vector<OpStats> compiled_rows() {
  return {
      compiled(row("aten::addmm", "fc1", Phase::kForward, {"bfloat16", "bfloat16", "bfloat16"}, {"bfloat16"},
                   OpCategory::kDemoted)),
      compiled(row("aten::addmm", "fc2", Phase::kForward, {"float32", "float32", "float32"}, {"float32"})),
      compiled(row("aten::mm", "fc1", Phase::kBackward, {"bfloat16", "bfloat16"}, {"bfloat16"})),
      compiled(row("aten::mm", "extra", Phase::kBackward, {"bfloat16", "bfloat16"}, {"bfloat16"})),
      timed(row("Torch-Compiled Region: 0/0", "", Phase::kForward, {}, {}), 8),
      timed(row("CompiledFunction", "", Phase::kForward, {}, {}), 7, false),
      timed(row("aten::addmm", "", Phase::kForward, {"bfloat16", "bfloat16", "bfloat16", "", "", "bfloat16"},
                {"bfloat16"}),
            3, false),
      timed(row("CompiledFunctionBackward", "", Phase::kBackward, {"bfloat16"}, {}), 2, false),
      timed(row("aten::_foreach_add_", "", Phase::kOptimizer, {"float32"}, {}), 2),
      compiled(row("aten::addmm", "c_attn", Phase::kForward, {"bfloat16", "bfloat16", "bfloat16"}, {"bfloat16"},
                   OpCategory::kDemoted)),
  };
}

StepTiming timing(double ms) {
  StepTiming t;
  t.unrecorded_steps = 10;
  t.unrecorded_median_ms = ms;
  return t;
}

const ModulePrecision* find(const EagerVsCompiled& d, const std::string& module, Phase phase) {
  for (const auto& m : d.modules)
    if (m.module == module && m.phase == phase) return &m;
  return nullptr;
}

TEST(EagerVsCompiled, MatchesEachModulesArithmeticAndSaysWhereTheRunsDiffer) {
  const auto eager = eager_rows();
  const auto comp = compiled_rows();
  const EagerVsCompiled d = compare_eager_and_compiled({&eager, timing(30), nullptr}, {&comp, timing(12), nullptr});
  EXPECT_TRUE(d.compiled_run_has_graphs);
  EXPECT_EQ(d.same, 3);  // fc1 forward and backward, c_attn
  EXPECT_EQ(d.differs, 1);
  EXPECT_EQ(d.eager_only, 1);     // the convolution: no graph op for it
  EXPECT_EQ(d.compiled_only, 1);  // "extra" backward
  EXPECT_EQ(d.modules.size(), 6u) << "the region's extern addmm (no module, nested) is the graph's own op again";
  const ModulePrecision* c_attn = find(d, "c_attn", Phase::kForward);
  ASSERT_NE(c_attn, nullptr);
  EXPECT_EQ(c_attn->agreement, Agreement::kSame) << "eager's addmm ran in bf16 after autocast's casts";
  EXPECT_EQ(c_attn->eager.operand_dtypes, (std::set<std::string>{"bfloat16"}));

  const ModulePrecision* fc1 = find(d, "fc1", Phase::kForward);
  ASSERT_NE(fc1, nullptr);
  EXPECT_EQ(fc1->agreement, Agreement::kSame);
  EXPECT_EQ(fc1->kind, "GEMM");
  // The operands, not the bias or the scalars; autocast's decision from eager's wrapper.
  EXPECT_EQ(fc1->eager.operand_dtypes, (std::set<std::string>{"bfloat16"}));
  EXPECT_EQ(fc1->eager.decision, OpCategory::kDemoted);
  EXPECT_EQ(fc1->compiled.decision, OpCategory::kDemoted);
  EXPECT_EQ(fc1->eager.calls, 4) << "the leaf addmm only, not its linear wrapper too";

  const ModulePrecision* fc2 = find(d, "fc2", Phase::kForward);
  ASSERT_NE(fc2, nullptr);
  EXPECT_EQ(fc2->agreement, Agreement::kDiffers);
  EXPECT_EQ(fc2->compiled.output_dtypes, (std::set<std::string>{"float32"}));
  EXPECT_EQ(fc2->compiled.decision, OpCategory::kUnchanged);

  const ModulePrecision* conv = find(d, "conv", Phase::kForward);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->kind, "convolution");
  EXPECT_EQ(conv->agreement, Agreement::kEagerOnly);

  ASSERT_TRUE(d.speedup());
  EXPECT_DOUBLE_EQ(*d.speedup(), 2.5);
}

OpRecord op(uint64_t id, uint64_t parent, int64_t step, std::string name, Phase phase, int64_t start_ms,
            int64_t ms) {
  OpRecord r;
  r.id = id;
  r.parent_id = parent;
  r.step = step;
  r.name = std::move(name);
  r.phase = phase;
  r.start_ns = start_ms * 1'000'000;
  r.end_ns = r.start_ns + ms * 1'000'000;
  return r;
}

TEST(EagerVsCompiled, PhaseAndRegionTimesAreMediansThatLeaveTheCompilingStepOut) {
  // Eager: 3 steps of a 6 ms forward (linear around addmm: the outer op only) and a
  // 4 ms backward (the engine's wrapper around the node around mm).
  RecordedTimes eager;
  uint64_t id = 1;
  for (int64_t step = 1; step <= 3; ++step) {
    const int64_t t = step * 100;
    const uint64_t linear = id++;
    eager.add_op(op(linear, 0, step, "aten::linear", Phase::kForward, t, 6));
    eager.add_op(op(id++, linear, step, "aten::addmm", Phase::kForward, t, 5));
    const uint64_t engine = id++;
    eager.add_op(op(engine, 0, step, "autograd::engine::evaluate_function: AddmmBackward0", Phase::kBackward, t + 10, 4));
    eager.add_op(op(id++, engine, step, "aten::mm", Phase::kBackward, t + 10, 3));
  }
  // Compiled: the first step's region call compiled (900 ms forward, 2,000 ms
  // backward); then 2 ms and 1 ms. The kernels of one step's forward: 0.5 ms of GPU.
  RecordedTimes comp;
  for (int64_t step = 1; step <= 3; ++step) {
    const int64_t t = step * 10'000;
    const bool compiles = step == 1;
    const uint64_t region = id++;
    comp.add_op(op(region, 0, step, "Torch-Compiled Region: 0/0", Phase::kForward, t, compiles ? 900 : 2));
    comp.add_op(op(id++, region, step, "CompiledFunction", Phase::kForward, t, compiles ? 899 : 1));
    const uint64_t engine = id++;
    comp.add_op(op(engine, 0, step, "autograd::engine::evaluate_function: CompiledFunctionBackward", Phase::kBackward,
                   t + 1000, compiles ? 2000 : 1));
    comp.add_op(op(id++, engine, step, "CompiledFunctionBackward", Phase::kBackward, t + 1000, compiles ? 2000 : 1));
    KernelRecord k;
    k.op_id = region;
    k.step = step;
    k.start_ns = t * 1'000'000;
    k.end_ns = k.start_ns + 500'000;
    comp.add_kernel(k);
  }
  const auto eager_ops = eager_rows();
  const auto comp_ops = compiled_rows();
  const EagerVsCompiled d =
      compare_eager_and_compiled({&eager_ops, timing(30), &eager}, {&comp_ops, timing(12), &comp});
  std::map<Phase, PhaseTime> by;
  for (const auto& p : d.phases) by[p.phase] = p;
  EXPECT_DOUBLE_EQ(by[Phase::kForward].eager_cpu_ms, 6.0) << "the linear once, not its addmm again";
  EXPECT_DOUBLE_EQ(by[Phase::kForward].compiled_cpu_ms, 2.0) << "the median step, not the one that compiled";
  EXPECT_DOUBLE_EQ(by[Phase::kBackward].eager_cpu_ms, 4.0);
  EXPECT_DOUBLE_EQ(by[Phase::kBackward].compiled_cpu_ms, 1.0);
  EXPECT_DOUBLE_EQ(by[Phase::kForward].compiled_gpu_ms, 0.5);
  EXPECT_DOUBLE_EQ(by[Phase::kForward].eager_gpu_ms, 0.0);
  // Regions by their median call, largest first, with the compiling call apart.
  ASSERT_EQ(d.regions.size(), 3u);
  EXPECT_EQ(d.regions.front().name, "Torch-Compiled Region: 0/0");
  EXPECT_EQ(d.regions.front().calls, 3);
  EXPECT_DOUBLE_EQ(d.regions.front().median_ms, 2.0);
  EXPECT_DOUBLE_EQ(d.regions.front().first_call_ms, 900.0);
}

TEST(EagerVsCompiled, ARunWithoutGraphsIsComparedOnItsEagerOps) {
  // Two eager runs (say the user forgot torch.compile): everything matches, and the
  // diff says the second run read no graph.
  const auto eager = eager_rows();
  const EagerVsCompiled d = compare_eager_and_compiled({&eager, timing(30), nullptr}, {&eager, timing(30), nullptr});
  EXPECT_FALSE(d.compiled_run_has_graphs);
  EXPECT_EQ(d.same, 5);  // fc1 and fc2 forward, fc1 backward, the convolution, c_attn
  EXPECT_EQ(d.differs + d.eager_only + d.compiled_only, 0);
}

}  // namespace
}  // namespace ampscope::profiler
