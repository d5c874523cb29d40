// GPU time inside torch.compile'd graphs (profiler/analysis/compiled_kernels.h), from
// records shaped as a GPU capture hands them over: the graph's op
// `ampscope::compiled_graph::<n>` launching Triton kernels itself (they open no ATen
// op), extern calls (aten::mm) launching library GEMMs, a CUDA-graph replay's
// library kernel that inductor's listing does not name, and kernels of ops outside
// any graph. The kernel names are ones inductor and cuBLAS used on an H200
// (tests/fixtures/h200-gpt2-backward-wrapper.py.txt; h100-kernels.tsv for nvjet).
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "profiler/analysis/compiled_kernels.h"
#include "profiler/analysis/compiled_kernels_text.h"
#include "tests/support/compiled_records.h"

namespace {

using namespace ampscope::profiler;

constexpr const char* kTriton = "triton_poi_fused_mm_t_view_1";
constexpr const char* kNvjet = "nvjet_sm90_tst_128x256_64x4_1x2_h_bz_coopA_NTN";

OpRecord op(uint64_t id, uint64_t parent, const std::string& name, int64_t step, int64_t start, int64_t end) {
  return ampscope::test::compiled::op(id, parent, name, step, start, end, Phase::kBackward);
}

KernelRecord kernel(uint64_t op_id, const std::string& name, int64_t start, int64_t end, bool tensor_cores = false) {
  return ampscope::test::compiled::kernel(op_id, name, start, end, tensor_cores);
}

CompiledKernelRow listed(const std::string& kind, const std::string& name, int64_t ordinal) {
  return ampscope::test::compiled::listed(kind, name, ordinal, 1, Phase::kBackward);
}

using ampscope::test::compiled::pointers;

const CompiledKernelRow* find(const std::vector<CompiledKernelRow>& rows, const std::string& kind,
                              const std::string& name, int64_t ordinal) {
  for (const CompiledKernelRow& r : rows)
    if (r.kind == kind && r.kernel == name && r.ordinal == ordinal) return &r;
  return nullptr;
}

// Two calls of graph 1 (steps 3 and 4). In each: the Triton kernel twice, aten::mm
// (cuBLAS on Tensor Cores), aten::addmm whose kernel an inner aten::mm launches, and
// in the first a library kernel launched by the graph's op itself (a CUDA-graph replay).
class CompiledKernelTimesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apart_times.keep_step_apart(3);
    for (int64_t call = 0; call < 2; ++call) {
      const uint64_t base = 100 * static_cast<uint64_t>(call + 1);
      const int64_t t = 1'000'000 * (call + 1);
      const std::vector<OpRecord> ops{op(base, 0, "ampscope::compiled_graph::1", 3 + call, t, t + 900),
                                      op(base + 2, base, "aten::mm", 3 + call, t + 100, t + 150),
                                      op(base + 3, base, "aten::addmm", 3 + call, t + 200, t + 300),
                                      op(base + 4, base + 3, "aten::mm", 3 + call, t + 210, t + 290),
                                      op(base + 50, 0, "aten::add", 3 + call, t + 950, t + 960)};
      times.add_ops(ops);
      apart_times.add_ops(ops);
      std::vector<KernelRecord> k{kernel(base, kTriton, t + 20, t + 30),  // listed out of launch order
                                  kernel(base, kTriton, t + 10, t + 15),
                                  kernel(base + 2, kNvjet, t + 120, t + 180, true),
                                  kernel(base + 4, kNvjet, t + 220, t + 270, true),
                                  kernel(base + 50, "vectorized_elementwise_kernel", t + 960, t + 970)};
      if (call == 0) k.push_back(kernel(base, "cutlass_80_wmma_tensorop_s161616gemm", t + 400, t + 440, true));
      kernels.push_back(k);
      times.add_kernels(pointers(kernels.back()));
      apart_times.add_kernels(pointers(kernels.back()));
    }
    rows = join_compiled_kernels(listing, times);
  }
  const std::vector<CompiledKernelRow> listing{
      listed(kCompiledFusedKernel, kTriton, 0), listed(kCompiledFusedKernel, kTriton, 1),
      listed(kCompiledExternKernel, "aten::mm", 0), listed(kCompiledExternKernel, "aten::addmm", 0)};
  CompiledKernelTimes times;
  CompiledKernelTimes apart_times;  // the same records, step 3 (the first call) kept apart
  std::vector<std::vector<KernelRecord>> kernels;
  std::vector<CompiledKernelRow> rows;
};

TEST_F(CompiledKernelTimesTest, TritonKernelsLaunchedByTheGraphItselfAreTimedInLaunchOrderPerCall) {
  const CompiledKernelRow* first = find(rows, kCompiledFusedKernel, kTriton, 0);
  const CompiledKernelRow* second = find(rows, kCompiledFusedKernel, kTriton, 1);
  ASSERT_TRUE(first && second);
  // Each call launches it twice: the first launch (5 ns) is ordinal 0 in both calls.
  EXPECT_EQ(first->calls, 2);
  EXPECT_EQ(first->kernels, 2);
  EXPECT_EQ(first->gpu_time_ns, 10);
  EXPECT_EQ(second->kernels, 2);
  EXPECT_EQ(second->gpu_time_ns, 20);
  EXPECT_EQ(first->cpu_time_ns, 0) << "a Triton kernel has no CPU op of its own";
}

TEST_F(CompiledKernelTimesTest, ExternCallsTakeTheKernelsOfTheirOpAndOfOpsInsideIt) {
  const CompiledKernelRow* mm = find(rows, kCompiledExternKernel, "aten::mm", 0);
  const CompiledKernelRow* addmm = find(rows, kCompiledExternKernel, "aten::addmm", 0);
  ASSERT_TRUE(mm && addmm);
  EXPECT_EQ(mm->calls, 2);
  EXPECT_EQ(mm->cpu_time_ns, 100);
  EXPECT_EQ(mm->gpu_time_ns, 120);
  EXPECT_EQ(mm->tensor_core_kernels, 2);
  EXPECT_EQ(addmm->gpu_time_ns, 100) << "launched by the aten::mm inside it";
  EXPECT_EQ(addmm->kernels, 2);
  EXPECT_EQ(find(rows, kCompiledOtherCall, "aten::mm", 1), nullptr)
      << "the inner aten::mm is part of the addmm call, not a call of the graph";
}

TEST_F(CompiledKernelTimesTest, TheGraphHoldsEveryKernelOfItsCallsAndUnlistedOnesAreOtherRows) {
  ASSERT_FALSE(rows.empty());
  const CompiledKernelRow& whole = rows.front();
  ASSERT_EQ(whole.kind, kCompiledGraphCall);
  EXPECT_EQ(whole.calls, 2);
  EXPECT_EQ(whole.kernels, 9) << "4 per call, and the replayed library kernel; not aten::add's";
  EXPECT_EQ(whole.gpu_time_ns, 2 * (5 + 10 + 60 + 50) + 40);
  const CompiledKernelRow* replay = find(rows, kCompiledOtherCall, "cutlass_80_wmma_tensorop_s161616gemm", 0);
  ASSERT_NE(replay, nullptr);
  EXPECT_EQ(replay->gpu_time_ns, 40);
  EXPECT_EQ(replay->tensor_core_kernels, 1);

  const CompiledTimeShare share = compiled_time_share(rows);
  EXPECT_EQ(share.gpu_graph_ns, 290);
  EXPECT_EQ(share.gpu_kernel_ns, 250);
  EXPECT_EQ(share.gpu_other_ns, 40);
  EXPECT_NEAR(share.gpu_kernel_share(), 250.0 / 290.0, 1e-12);
}

// The op table may leave the warm-up step out (warmup_step.h); the compiled kernels' times,
// by which the category ledger moves the regions' time, then cover the same steps: here the
// second call alone. Kept apart or not, every step's times are the same.
TEST_F(CompiledKernelTimesTest, WithoutTheStepKeptApartTheRowsHoldTheOtherStepsCalls) {
  const std::vector<CompiledKernelRow> all = join_compiled_kernels(listing, apart_times);
  ASSERT_EQ(all.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    EXPECT_EQ(std::tie(all[i].kernel, all[i].calls, all[i].cpu_time_ns, all[i].kernels, all[i].gpu_time_ns),
              std::tie(rows[i].kernel, rows[i].calls, rows[i].cpu_time_ns, rows[i].kernels, rows[i].gpu_time_ns));

  const std::vector<CompiledKernelRow> later = join_compiled_kernels(listing, apart_times, true);
  ASSERT_FALSE(later.empty());
  const CompiledKernelRow& whole = later.front();
  ASSERT_EQ(whole.kind, kCompiledGraphCall);
  EXPECT_EQ(whole.calls, 1);
  EXPECT_EQ(whole.cpu_time_ns, 900);
  EXPECT_EQ(whole.kernels, 4);
  EXPECT_EQ(whole.gpu_time_ns, 5 + 10 + 60 + 50);
  EXPECT_EQ(whole.first_call_gpu_ns, 0) << "the first call was step 3's";
  const CompiledKernelRow* mm = find(later, kCompiledExternKernel, "aten::mm", 0);
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(std::tie(mm->calls, mm->cpu_time_ns, mm->gpu_time_ns, mm->tensor_core_kernels),
            std::tuple(int64_t{1}, int64_t{50}, int64_t{60}, int64_t{1}));
  EXPECT_EQ(find(later, kCompiledOtherCall, "cutlass_80_wmma_tensorop_s161616gemm", 0), nullptr)
      << "launched in step 3 alone: nothing of it is left";
  EXPECT_EQ(compiled_time_share(later).gpu_graph_ns, 125);
}

TEST_F(CompiledKernelTimesTest, TheShareTextSaysWhereTheGpuTimeWent) {
  const std::string text = compiled_share_text(compiled_time_share(rows));
  EXPECT_NE(text.find("; on the GPU, "), std::string::npos) << text;
  EXPECT_NE(text.find("86% in the kernels below and 14% in kernels inductor did not list"), std::string::npos)
      << text;
  // A graph with no GPU kernels (the CPU) says nothing of a GPU.
  CompiledTimeShare cpu_only = compiled_time_share(rows);
  cpu_only.gpu_graph_ns = 0;
  EXPECT_EQ(compiled_share_text(cpu_only).find("GPU"), std::string::npos);
}

TEST(CompiledKernelTimes, KernelsOfOpsLongGoneOrOutsideAnyGraphAreIgnored) {
  CompiledKernelTimes times;
  times.add_ops({op(7, 0, "ampscope::compiled_graph::0", 1, 0, 100)});
  times.add_ops({op(900, 0, "aten::add", 2 + kOpMemorySteps, 0, 10)});  // step 1's ops are forgotten
  const std::vector<KernelRecord> late{kernel(7, kTriton, 10, 20), kernel(900, kTriton, 10, 20)};
  times.add_kernels(pointers(late));
  const auto rows = join_compiled_kernels({}, times);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.front().kernels, 0);
  EXPECT_EQ(rows.front().calls, 1);
}

// CUPTI hands a buffer over when it fills: with CUDA graphs (a few hundred kernels a
// step) that was 8 and more steps after the kernels ran on an H200, and the backward
// graph's extern calls lost all their GPU time.
TEST(CompiledKernelTimes, KernelsArrivingManyStepsAfterTheirOpsStillCount) {
  CompiledKernelTimes times;
  times.add_ops({op(7, 0, "ampscope::compiled_graph::1", 1, 0, 1000), op(8, 7, "aten::mm", 1, 100, 200)});
  for (int64_t step = 2; step <= 20; ++step)
    times.add_ops({op(100 + static_cast<uint64_t>(step), 0, "aten::add", step, 0, 10)});
  const std::vector<KernelRecord> late{kernel(8, kNvjet, 120, 180, true)};
  times.add_kernels(pointers(late));
  const auto rows = join_compiled_kernels({listed(kCompiledExternKernel, "aten::mm", 0)}, times);
  const CompiledKernelRow* mm = find(rows, kCompiledExternKernel, "aten::mm", 0);
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->kernels, 1);
  EXPECT_EQ(mm->gpu_time_ns, 60);
}

}  // namespace
