// A torch.compile'd region is one recorded op ("Torch-Compiled Region: 0/0", and
// ampscope's marker around a backward graph's call) around the kernels inductor
// generated: by its row alone, a bf16 model's GEMMs read "unchanged" and "demoted 0 %".
// compiled_compute_time() and category_totals() (profiler/records.h) count each
// kernel's time under what it computes. The kernels below are those of
// examples/compiled_bf16.py's MLP under CPU bf16 autocast, as its session stores them
// (`ampscope summary` of a 4-step run).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "profiler/analysis/compiled_kernels.h"
#include "profiler/records.h"

namespace {

using namespace ampscope::profiler;

CompiledFusedOp graph_op(const std::string& name, const std::string& module, OpCategory category,
                         const std::string& out) {
  CompiledFusedOp op;
  op.name = name;
  op.module = module;
  op.category = std::string(to_string(category));
  op.output_dtypes = {out};
  return op;
}

CompiledKernelRow kernel_row(const char* kind, const std::string& name, int64_t cpu_ns, int64_t gpu_ns,
                             std::vector<CompiledFusedOp> ops) {
  CompiledKernelRow r;
  r.kind = kind;
  r.kernel = name;
  r.calls = 4;
  r.cpu_time_ns = cpu_ns;
  r.gpu_time_ns = gpu_ns;
  r.ops = std::move(ops);
  return r;
}

OpStats row(const std::string& name, OpCategory category, int64_t calls, int64_t cpu_ns, std::string out = "") {
  OpStats s;
  s.name = name;
  s.category = category;
  s.top_level = true;
  s.calls = calls;
  s.cpu_time_ns = cpu_ns;
  if (!out.empty()) s.output_dtypes = {out};
  return s;
}

const CategoryTotals* total_of(const std::vector<CategoryTotals>& totals, OpCategory c) {
  for (const CategoryTotals& t : totals)
    if (t.category == c) return &t;
  return nullptr;
}

// The forward graph's kernels: three extern addmm (bf16 GEMMs), a fused gelu that
// also casts the next layer's input to bf16, a kernel of casts alone (the weights to
// bf16), a kernel the listing names no op for, and the first call's tuning.
std::vector<CompiledKernelRow> forward_graph() {
  constexpr auto demoted = OpCategory::kDemoted;
  const auto cast = OpCategory::kAutocastCast;
  return {
      kernel_row(kCompiledGraphCall, "", 13'000, 0, {}),
      kernel_row(kCompiledExternKernel, "aten::addmm", 10'600, 0, {graph_op("aten::addmm", "layers.0", demoted, "bfloat16")}),
      kernel_row(kCompiledExternKernel, "aten::addmm", 1'000, 0, {graph_op("aten::addmm", "layers.2", demoted, "bfloat16")}),
      kernel_row(kCompiledFusedKernel, "graph_0_cpp_fused__to_copy_gelu_1", 35, 0,
                 {graph_op("prims::convert_element_type", "layers.1", OpCategory::kUnchanged, "float32"),
                  graph_op("aten::erf", "layers.1", OpCategory::kUnchanged, "float32"),
                  graph_op("prims::convert_element_type", "layers.2", cast, "bfloat16"),
                  graph_op("prims::convert_element_type", "layers.2", cast, "bfloat16")}),
      kernel_row(kCompiledFusedKernel, "graph_0_cpp_fused__to_copy_0", 13, 0,
                 {graph_op("prims::convert_element_type", "layers.0", cast, "bfloat16")}),
      kernel_row(kCompiledFusedKernel, "graph_0_cpp_fused_no_provenance_2", 500, 0, {}),
      kernel_row(kCompiledTuningCall, "graph_0_cpp_fused__to_copy_0", 700, 0,
                 {graph_op("prims::convert_element_type", "layers.0", cast, "bfloat16")}),
  };
}

TEST(CompiledComputeTime, EachKernelCountsUnderWhatItComputesNotTheCastsFusedIntoIt) {
  const std::vector<CompiledComputeTime> time = compiled_compute_time(forward_graph());
  auto find = [&](OpCategory c, const std::string& dtype) -> const CompiledComputeTime* {
    for (const auto& t : time)
      if (t.category == c && t.output_dtype == dtype) return &t;
    return nullptr;
  };
  const auto* gemms = find(OpCategory::kDemoted, "bfloat16");
  ASSERT_NE(gemms, nullptr);
  EXPECT_EQ(gemms->cpu_time_ns, 11'600) << "both extern GEMMs";
  const auto* gelu = find(OpCategory::kUnchanged, "float32");
  ASSERT_NE(gelu, nullptr) << "the gelu, whose kernel also casts layers.2's input";
  EXPECT_EQ(gelu->cpu_time_ns, 35);
  const auto* casts = find(OpCategory::kAutocastCast, "bfloat16");
  ASSERT_NE(casts, nullptr) << "a kernel of casts alone is the cast tax";
  EXPECT_EQ(casts->cpu_time_ns, 13) << "not the tuning of it, nor a kernel without ops";
  EXPECT_EQ(time.size(), 3u);
}

TEST(CompiledComputeTime, AKernelOfTwoDecisionsTakesTheOneMostOfItsOpsHave) {
  const auto time = compiled_compute_time({kernel_row(
      kCompiledFusedKernel, "triton_tem_fused_mm_softmax_0", 100, 900,
      {graph_op("aten::mm", "attn", OpCategory::kDemoted, "bfloat16"),
       graph_op("aten::_softmax", "attn", OpCategory::kKeptFp32, "float32"),
       graph_op("aten::_log_softmax", "attn", OpCategory::kKeptFp32, "float32"),
       graph_op("aten::add", "attn", OpCategory::kUnchanged, "float32")})});
  ASSERT_EQ(time.size(), 1u);
  EXPECT_EQ(time[0].category, OpCategory::kKeptFp32);
  EXPECT_EQ(time[0].output_dtype, "float32");
  EXPECT_EQ(time[0].gpu_time_ns, 900);
}

// The forward region (13 us, unchanged, with dynamo's guards around the graph's call)
// gives its kernels' 11.648 us to the categories they computed in; the graph ops' own
// rows (calls, no time) keep their calls; eager rows are not touched.
TEST(CategoryTotals, ACompiledRegionsKernelTimeMovesToWhatTheyComputed) {
  std::vector<OpStats> rows{row("Torch-Compiled Region: 0/0", OpCategory::kUnchanged, 4, 13'500),
                            row("aten::cross_entropy_loss", OpCategory::kKeptFp32, 4, 5'000, "float32"),
                            row("aten::randn", OpCategory::kUnchanged, 4, 1'000, "float32"),
                            row("aten::addmm", OpCategory::kDemoted, 12, 0, "bfloat16")};
  rows.back().compiled = true;
  const auto plain = category_totals(rows);
  ASSERT_NE(total_of(plain, OpCategory::kDemoted), nullptr);
  EXPECT_EQ(total_of(plain, OpCategory::kDemoted)->cpu_time_ns, 0) << "the region's row alone: demoted 0 %";

  const auto totals = category_totals(rows, compiled_compute_time(forward_graph()));
  const auto* demoted = total_of(totals, OpCategory::kDemoted);
  const auto* unchanged = total_of(totals, OpCategory::kUnchanged);
  const auto* kept = total_of(totals, OpCategory::kKeptFp32);
  const auto* casts = total_of(totals, OpCategory::kAutocastCast);
  ASSERT_TRUE(demoted && unchanged && kept && casts);
  EXPECT_EQ(demoted->cpu_time_ns, 11'600);
  EXPECT_EQ(demoted->compiled_cpu_time_ns, 11'600);
  EXPECT_EQ(demoted->calls, 12) << "the graph's GEMMs";
  EXPECT_EQ(casts->cpu_time_ns, 13);
  EXPECT_EQ(casts->calls, 0) << "no call of its own: the casts' graph rows were not given";
  EXPECT_EQ(unchanged->cpu_time_ns, 13'500 - 11'600 - 13 + 1'000) << "the region's rest (guards, wrapper, tuning)";
  EXPECT_EQ(unchanged->compiled_cpu_time_ns, 35);
  EXPECT_EQ(kept->cpu_time_ns, 5'000);
  int64_t sum = 0;
  for (const auto& t : totals) sum += t.cpu_time_ns;
  EXPECT_EQ(sum, 13'500 + 5'000 + 1'000) << "time moves between categories; none is made or lost";
}

// A file whose kernel rows hold more than its regions' rows (the kernel table is saved
// every two seconds, the op table at its own pace): the regions give all they hold,
// shared alike, and no category goes below zero.
TEST(CategoryTotals, KernelsNeverTakeMoreThanTheirRegionsHold) {
  const std::vector<OpStats> rows{row("ampscope::compiled_graph::1", OpCategory::kUnchanged, 4, 5'000),
                                  row("aten::ones_like", OpCategory::kUnchanged, 4, 100, "float32")};
  const std::vector<CompiledComputeTime> compiled{{OpCategory::kDemoted, "bfloat16", 8'000, 0},
                                                  {OpCategory::kUnchanged, "float32", 2'000, 0}};
  const auto totals = category_totals(rows, compiled);
  const auto* demoted = total_of(totals, OpCategory::kDemoted);
  const auto* unchanged = total_of(totals, OpCategory::kUnchanged);
  ASSERT_TRUE(demoted && unchanged);
  EXPECT_EQ(demoted->cpu_time_ns, 4'000);
  EXPECT_EQ(unchanged->cpu_time_ns, 100 + 1'000);
  EXPECT_EQ(demoted->calls, 0);
}

TEST(CategoryTotals, WithoutACompiledRegionNothingMoves) {
  const std::vector<OpStats> rows{row("aten::linear", OpCategory::kDemoted, 4, 3'000, "bfloat16"),
                                  row("aten::gelu", OpCategory::kUnchanged, 4, 500, "bfloat16")};
  const auto totals = category_totals(rows, {{OpCategory::kKeptFp32, "float32", 2'000, 0}});
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals[0].cpu_time_ns, 3'000);
  EXPECT_EQ(totals[1].cpu_time_ns, 500);
  EXPECT_EQ(total_of(totals, OpCategory::kKeptFp32), nullptr);
}

// Compiling in the user's steps (kTorchCompileOp, the Python capture's op around it): the
// model's first call compiles before any region opens (a top-level op), a graph break's
// resumed frame compiles inside the region that reached it. Neither is work autocast
// decided on: GPT-2's region read 3.85 s "unchanged" for 4 calls of 40 ms graphs.
TEST(CategoryTotals, CompilingIsInNoCategoryWhereverItRan) {
  std::vector<OpStats> rows{row("Torch-Compiled Region: 1/0", OpCategory::kUnchanged, 4, 3'854),
                            row(std::string(kTorchCompileOp), OpCategory::kUnchanged, 1, 9'000),
                            row(std::string(kTorchCompileOp), OpCategory::kUnchanged, 1, 3'600),
                            row("aten::embedding", OpCategory::kUnchanged, 4, 100, "float32")};
  rows[2].top_level = false;  // inside the region's row
  const auto totals = category_totals(rows, compiled_compute_time(forward_graph()));
  const auto* unchanged = total_of(totals, OpCategory::kUnchanged);
  const auto* demoted = total_of(totals, OpCategory::kDemoted);
  ASSERT_TRUE(unchanged && demoted);
  // The region: 3,854 - 3,600 compiling = 254, of which the kernels take what it holds
  // (the GEMMs asked for 11,600 of the 11,648 wanted: scaled to 254).
  int64_t sum = 0;
  for (const auto& t : totals) sum += t.cpu_time_ns;
  EXPECT_EQ(sum, 3'854 - 3'600 + 100) << "neither compile in any category";
  EXPECT_GT(demoted->cpu_time_ns, 0);
  EXPECT_EQ(unchanged->calls, 4 + 4) << "the region's and the embedding's calls, not the compiles'";

  const CompileTime compiling = compile_time(rows);
  EXPECT_EQ(compiling.calls, 2);
  EXPECT_EQ(compiling.cpu_time_ns, 12'600);
}

// The GUI's strip splits the same time by output dtype ("computed in bf16 56 %"): the
// dtype split is the category split cut finer, the region's moves made once, so the two
// cannot drift apart (each summed its own way before, the compile taken twice over).
TEST(CategoryDtypeTime, IsTheCategorySplitCutByTheDtypeTheTimeComputedIn) {
  std::vector<OpStats> rows{row("Torch-Compiled Region: 0/0", OpCategory::kUnchanged, 4, 13'500 + 2'000),
                            row(std::string(kTorchCompileOp), OpCategory::kUnchanged, 1, 2'000),
                            row("aten::cross_entropy_loss", OpCategory::kKeptFp32, 4, 5'000, "float32"),
                            row("aten::linear", OpCategory::kDemoted, 4, 3'000, "bfloat16")};
  rows[1].top_level = false;  // a compile inside the region
  const auto compiled = compiled_compute_time(forward_graph());
  const auto cells = time_by_category_and_dtype(rows, compiled);
  const auto totals = category_totals(rows, compiled);
  for (const auto& t : totals) {
    int64_t cut = 0;
    for (const auto& c : cells)
      if (c.category == t.category) cut += c.cpu_time_ns;
    EXPECT_EQ(cut, t.cpu_time_ns) << to_string(t.category);
  }
  auto time_in = [&](OpCategory category, const std::string& dtype) {
    int64_t sum = 0;
    for (const auto& c : cells)
      if (c.category == category && c.output_dtype == dtype) sum += c.cpu_time_ns;
    return sum;
  };
  EXPECT_EQ(time_in(OpCategory::kDemoted, "bfloat16"), 3'000 + 11'600) << "the eager linear and the graph's GEMMs";
  EXPECT_EQ(time_in(OpCategory::kUnchanged, ""), 13'500 - 11'648) << "the region's rest, less its compile";
  EXPECT_EQ(time_in(OpCategory::kKeptFp32, "float32"), 5'000);
}

TEST(CompiledRegionOps, AreDynamosAotAutogradsAndAmpscopesGraphMarker) {
  for (const char* name : {"Torch-Compiled Region: 0/0", "Torch-Compiled Region: 1/2", "CompiledFunction",
                           "CompiledFunctionBackward", "ampscope::compiled_graph::3"})
    EXPECT_TRUE(is_compiled_region_op(name)) << name;
  for (const char* name : {"aten::addmm", "TorchDynamo Cache Lookup", "graph_0_cpp_fused_gelu_1", "CompiledFunctionX"})
    EXPECT_FALSE(is_compiled_region_op(name)) << name;
}

}  // namespace
