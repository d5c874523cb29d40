// torch.compile(mode="reduce-overhead") replays CUDA graphs: every kernel of a replay
// is launched by the compiled graph's op itself, the library kernels of its extern
// calls (cuBLAS, cuDNN) included, with no ATen op around them. CompiledKernelTimes
// gives each replayed library kernel to the extern call that launched it when the
// graph ran eagerly (CUDA graph trees' warmup run), by the order of kernel names.
// Synthetic records shaped as that H200 capture gave them, then the capture itself
// (tests/fixtures/h200-gpt2-cudagraphs-records.tsv).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "profiler/analysis/compiled_kernels.h"
#include "profiler/analysis/compiled_kernels_text.h"
#include "tests/support/compiled_records.h"

namespace {

using namespace ampscope::profiler;

constexpr const char* kTriton = "triton_poi_fused__to_copy_3";
constexpr const char* kNvjetA = "nvjet_sm90_hsh_192x192_64x3_1x2_h_bz_coopB_bias_NNN";
constexpr const char* kNvjetB = "nvjet_sm90_hsh_192x128_64x5_1x2_h_bz_coopB_bias_NNT";
constexpr const char* kCudnn = "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64";
constexpr const char* kPhilox = "at::cuda::philox::unpack_cudnn(at::PhiloxCudaState, long*, long*)";
constexpr const char* kSdpa = "aten::_scaled_dot_product_cudnn_attention";

OpRecord op(uint64_t id, uint64_t parent, const std::string& name, int64_t step, int64_t start, int64_t end) {
  return ampscope::test::compiled::op(id, parent, name, step, start, end, Phase::kForward);
}

KernelRecord kernel(uint64_t op_id, const std::string& name, int64_t start, int64_t end) {
  const bool tensor_cores = name.starts_with("nvjet") || name.starts_with("cudnn") || name.starts_with("cutlass");
  return ampscope::test::compiled::kernel(op_id, name, start, end, tensor_cores);
}

CompiledKernelRow listed(const std::string& kind, const std::string& name, int64_t ordinal, int64_t graph = 1) {
  return ampscope::test::compiled::listed(kind, name, ordinal, graph, Phase::kForward);
}

using ampscope::test::compiled::pointers;

const CompiledKernelRow* find(const std::vector<CompiledKernelRow>& rows, const std::string& name, int64_t ordinal) {
  for (const CompiledKernelRow& r : rows)
    if (r.kind != kCompiledGraphCall && r.kernel == name && r.ordinal == ordinal) return &r;
  return nullptr;
}

// The eager call of graph 1 (step 1): inductor tunes its Triton kernel (launched three
// times) with an aten::zero_ between, then three addmm calls and one cuDNN attention
// whose first call sets three Memsets where later calls set one. Then two replays
// (steps 2, 3) launching everything from the graph's op, with one library kernel the
// eager run never launched; the first is the call that recorded the CUDA graph, whose
// ops ran on the CPU while their kernels were captured.
std::vector<std::vector<KernelRecord>> add_eager_call(CompiledKernelTimes& times) {
  times.add_ops({op(10, 0, "ampscope::compiled_graph::1", 1, 0, 10'000), op(11, 10, "aten::zero_", 1, 62, 70),
                 op(12, 10, "aten::addmm", 1, 100, 200), op(13, 10, kSdpa, 1, 300, 400),
                 op(14, 10, "aten::addmm", 1, 500, 600), op(15, 10, "aten::addmm", 1, 700, 800)});
  return {{kernel(10, kTriton, 10, 20), kernel(10, kTriton, 30, 40), kernel(10, kTriton, 50, 60),
           kernel(11, "vectorized_elementwise_kernel<FillFunctor<int>>", 63, 64), kernel(12, "Memset", 110, 111),
           kernel(12, kNvjetA, 120, 150), kernel(13, kPhilox, 305, 306), kernel(13, "Memset", 310, 311),
           kernel(13, "Memset", 312, 313), kernel(13, "Memset", 314, 315), kernel(13, kCudnn, 320, 360),
           kernel(14, kNvjetB, 510, 530), kernel(15, "Memset", 705, 706), kernel(15, kNvjetA, 710, 750)}};
}

std::vector<KernelRecord> replay(uint64_t call, int64_t t) {
  return {kernel(call, kTriton, t + 10, t + 15),    kernel(call, "Memset", t + 20, t + 21),
          kernel(call, kNvjetA, t + 22, t + 47),    kernel(call, kPhilox, t + 50, t + 51),
          kernel(call, "Memset", t + 52, t + 53),   kernel(call, kCudnn, t + 54, t + 84),
          kernel(call, kNvjetB, t + 90, t + 105),   kernel(call, "Memset", t + 110, t + 111),
          kernel(call, kNvjetA, t + 112, t + 147),  kernel(call, "cutlass_80_tensorop_gemm", t + 150, t + 160)};
}

class CudaGraphReplays : public ::testing::Test {
 protected:
  void SetUp() override {
    kernels = add_eager_call(times);
    times.add_kernels(pointers(kernels.back()));
    for (int64_t r = 0; r < 2; ++r) {
      const uint64_t call = 20 + 10 * static_cast<uint64_t>(r);
      const int64_t t = 10'000 * (r + 1);
      std::vector<OpRecord> ops{op(call, 0, "ampscope::compiled_graph::1", 2 + r, t, t + 200)};
      if (r == 0)  // CUDA graph trees record the graph (its ops run, their kernels are captured), then replay it
        for (const char* name : {"aten::addmm", kSdpa, "aten::addmm", "aten::addmm"})
          ops.push_back(op(call + ops.size(), call, name, 2, t + static_cast<int64_t>(ops.size()), t + 9));
      times.add_ops(ops);
      kernels.push_back(replay(call, t));
      times.add_kernels(pointers(kernels.back()));
    }
    CompiledKernelRow fused = listed(kCompiledFusedKernel, kTriton, 0);
    fused.ops.push_back({"convert_element_type_3", "prims::convert_element_type", "lm_head", "autocast_cast", {}, {}});
    rows = join_compiled_kernels(
        {fused, listed(kCompiledExternKernel, "aten::addmm", 0),
         listed(kCompiledExternKernel, kSdpa, 0), listed(kCompiledExternKernel, "aten::addmm", 1),
         listed(kCompiledExternKernel, "aten::addmm", 2)},
        times);
  }
  CompiledKernelTimes times;
  std::vector<std::vector<KernelRecord>> kernels;
  std::vector<CompiledKernelRow> rows;
};

TEST_F(CudaGraphReplays, ReplayedLibraryKernelsAreTheExternCallsThatLaunchedThemEagerly) {
  const CompiledKernelRow* first = find(rows, "aten::addmm", 0);
  const CompiledKernelRow* second = find(rows, "aten::addmm", 1);
  const CompiledKernelRow* third = find(rows, "aten::addmm", 2);
  const CompiledKernelRow* attention = find(rows, kSdpa, 0);
  ASSERT_TRUE(first && second && third && attention);
  EXPECT_EQ(first->calls, 3) << "its eager call and two replays (the recording call once)";
  EXPECT_EQ(first->kernels, 6);
  EXPECT_EQ(first->gpu_time_ns, 31 + 2 * 26);
  EXPECT_EQ(first->tensor_core_kernels, 3);
  EXPECT_EQ(first->first_call_gpu_ns, 31);
  EXPECT_EQ(second->gpu_time_ns, 20 + 2 * 15);
  // The same GEMM kernel twice per replay: the second is the third addmm's, by order.
  EXPECT_EQ(third->gpu_time_ns, 41 + 2 * 36);
  EXPECT_EQ(third->calls, 3);
  EXPECT_EQ(attention->kernels, 5 + 2 * 3) << "the first call's two extra Memsets stay its own";
  EXPECT_EQ(attention->gpu_time_ns, 44 + 2 * 32);
  for (const char* name : {kNvjetA, kNvjetB, kCudnn, kPhilox, "Memset"})
    EXPECT_EQ(find(rows, name, 0), nullptr) << name << " is an extern call's, not a row of its own";
}

TEST_F(CudaGraphReplays, WhatNoEagerCallLaunchedStaysUnlisted) {
  const CompiledKernelRow* unknown = find(rows, "cutlass_80_tensorop_gemm", 0);
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->kind, kCompiledOtherCall);
  EXPECT_EQ(unknown->gpu_time_ns, 20);
  const CompiledKernelRow* fused = find(rows, kTriton, 0);
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->calls, 3);
  EXPECT_EQ(fused->gpu_time_ns, 10 + 2 * 5);
}

// Triton's autotuner in the first call: the listed kernel's two extra launches, one
// row with the graph ops the kernel computes, and the zero_ between them.
TEST_F(CudaGraphReplays, FirstCallTuningIsOneRowPerNameWithTheKernelsOps) {
  std::vector<const CompiledKernelRow*> tuning;
  for (const CompiledKernelRow& r : rows)
    if (r.kind == kCompiledTuningCall) tuning.push_back(&r);
  ASSERT_EQ(tuning.size(), 2u);
  const CompiledKernelRow* triton = tuning[0]->kernel == kTriton ? tuning[0] : tuning[1];
  const CompiledKernelRow* zero = tuning[0]->kernel == kTriton ? tuning[1] : tuning[0];
  EXPECT_EQ(triton->kernel, kTriton);
  EXPECT_EQ(triton->calls, 2) << "its second and third launch in the first call";
  EXPECT_EQ(triton->kernels, 2);
  EXPECT_EQ(triton->gpu_time_ns, 20);
  EXPECT_EQ(triton->first_call_gpu_ns, 20);
  ASSERT_EQ(triton->ops.size(), 1u) << "what the kernel computes, as its listed row says";
  EXPECT_EQ(triton->ops[0].module, "lm_head");
  EXPECT_EQ(fused_ops_text(*triton), "lm_head autocast_cast: convert_element_type");
  EXPECT_EQ(zero->kernel, "aten::zero_");
  EXPECT_EQ(zero->gpu_time_ns, 1);
  EXPECT_TRUE(zero->ops.empty());
}

TEST(CompiledTuning, AResetOpInEveryCallAndOneInAGraphThatTunedNothingStayOther) {
  CompiledKernelTimes times;
  std::vector<std::vector<KernelRecord>> kernels;
  // Graph 2 tunes nothing; its first call zeroes a buffer, and so does every call.
  for (int64_t call = 0; call < 2; ++call) {
    const uint64_t base = 100 * static_cast<uint64_t>(call + 1);
    const int64_t t = 1'000 * (call + 1);
    times.add_ops({op(base, 0, "ampscope::compiled_graph::2", 1 + call, t, t + 100),
                   op(base + 1, base, "aten::zero_", 1 + call, t + 10, t + 20)});
    kernels.push_back({kernel(base, kTriton, t + 30, t + 40), kernel(base + 1, "FillFunctor", t + 12, t + 13)});
    if (call == 0) kernels.back().push_back(kernel(base + 1, "FillFunctor", t + 14, t + 15));
    times.add_kernels(pointers(kernels.back()));
  }
  times.add_ops({op(300, 0, "ampscope::compiled_graph::3", 3, 5'000, 5'100), op(301, 300, "aten::zero_", 3, 5'010, 5'020)});
  kernels.push_back({kernel(301, "FillFunctor", 5'011, 5'012)});
  times.add_kernels(pointers(kernels.back()));
  const std::vector<CompiledKernelRow> rows =
      join_compiled_kernels({listed(kCompiledFusedKernel, kTriton, 0, 2)}, times);
  for (const CompiledKernelRow& r : rows) EXPECT_NE(r.kind, kCompiledTuningCall) << r.graph << " " << r.kernel;
  const auto zero_of_graph_3 = std::find_if(rows.begin(), rows.end(),
                                            [](const CompiledKernelRow& r) { return r.graph == 3 && r.kernel == "aten::zero_"; });
  ASSERT_NE(zero_of_graph_3, rows.end());
  EXPECT_EQ(zero_of_graph_3->kind, kCompiledOtherCall) << "one call only, but no kernel of graph 3 was tuned";
}

TEST_F(CudaGraphReplays, TheShareAfterFirstCallsLeavesOutTheEagerRunAndItsTuning) {
  ASSERT_EQ(rows.front().kind, kCompiledGraphCall);
  EXPECT_EQ(rows.front().calls, 3);
  EXPECT_EQ(rows.front().gpu_time_ns, 167 + 2 * 124);
  EXPECT_EQ(rows.front().first_call_gpu_ns, 167);
  const CompiledTimeShare share = compiled_time_share(rows);
  EXPECT_EQ(share.gpu_kernel_ns, 83 + 50 + 113 + 108 + 20);
  EXPECT_EQ(share.gpu_kernel_first_ns, 31 + 20 + 41 + 44 + 10);
  EXPECT_EQ(share.gpu_tuning_ns, 10 + 10 + 1);
  EXPECT_EQ(share.gpu_other_ns, 20);
  EXPECT_NEAR(share.gpu_attributed_share(), (374.0 + 21.0) / 415.0, 1e-12);
  ASSERT_TRUE(share.has_later_calls());
  EXPECT_NEAR(share.gpu_kernel_share_after_first_calls(), 228.0 / 248.0, 1e-12);
  const std::string text = compiled_share_text(share);
  EXPECT_NE(text.find("on the GPU, 90% in the kernels below, 5.1% in inductor tuning them in first calls and 4.8% "
                      "in kernels inductor did not list; after each "
                      "graph's first call, 92% in the kernels below (the first calls took 40% of the GPU time: a "
                      "graph's first run tunes its kernels and warms CUDA graphs up)"),
            std::string::npos)
      << text;
}

TEST(CudaGraphReplaysWithoutEagerCall, KeepTheirKernelNames) {
  CompiledKernelTimes times;  // a capture that started after the graph's eager run
  std::vector<std::vector<KernelRecord>> kernels;
  for (int64_t r = 0; r < 2; ++r) {
    const uint64_t call = 20 + 10 * static_cast<uint64_t>(r);
    times.add_ops({op(call, 0, "ampscope::compiled_graph::1", 5 + r, 10'000 * (r + 1), 10'000 * (r + 1) + 200)});
    kernels.push_back(replay(call, 10'000 * (r + 1)));
    times.add_kernels(pointers(kernels.back()));
  }
  const auto rows = join_compiled_kernels({listed(kCompiledExternKernel, "aten::addmm", 0)}, times);
  const CompiledKernelRow* gemm = find(rows, kNvjetA, 1);
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->kind, kCompiledOtherCall);
  EXPECT_EQ(gemm->gpu_time_ns, 2 * 35);
  EXPECT_EQ(find(rows, "aten::addmm", 0)->kernels, 0) << "nothing to say which call a replayed kernel was";
  const CompiledTimeShare share = compiled_time_share(rows);
  EXPECT_EQ(share.gpu_graph_first_ns, 124) << "the first call seen";
}

// ---- the H200 capture ----

struct Fixture {
  std::vector<std::vector<OpRecord>> ops_by_step;
  std::vector<std::vector<KernelRecord>> kernels_by_step;
  std::vector<CompiledKernelRow> listed;
};

Fixture read_fixture(const std::string& path) {
  Fixture f;
  std::ifstream in(path);
  std::map<std::string, std::string> names;
  std::map<uint64_t, int64_t> step_of;
  std::string line;
  auto slot = [](auto& by_step, int64_t step) -> auto& {
    if (by_step.size() <= static_cast<size_t>(step)) by_step.resize(static_cast<size_t>(step) + 1);
    return by_step[static_cast<size_t>(step)];
  };
  while (std::getline(in, line)) {
    std::vector<std::string> field;
    std::stringstream fields(line);
    for (std::string v; std::getline(fields, v, '\t');) field.push_back(v);
    if (field.empty() || field[0].starts_with("#")) continue;
    if (field[0] == "name" && field.size() == 3) {
      names[field[1]] = field[2];
    } else if (field[0] == "op" && field.size() == 8) {
      OpRecord r = op(std::stoull(field[1]), std::stoull(field[2]), field[7], std::stoll(field[3]),
                      std::stoll(field[5]), std::stoll(field[5]) + std::stoll(field[6]));
      r.phase = parse_phase(field[4]).value_or(Phase::kOther);
      step_of[r.id] = r.step;
      slot(f.ops_by_step, r.step).push_back(r);
    } else if (field[0] == "kernel" && field.size() == 7) {
      KernelRecord k = kernel(std::stoull(field[1]), names[field[6]], std::stoll(field[2]),
                              std::stoll(field[2]) + std::stoll(field[3]));
      k.tensor_core_by_name = field[4] == "1";
      k.kind = parse_activity_kind(field[5]).value_or(ActivityKind::kKernel);
      slot(f.kernels_by_step, step_of[k.op_id]).push_back(k);
    } else if (field[0] == "listed" && field.size() == 6) {
      CompiledKernelRow r = listed(field[3], field[5], std::stoll(field[4]), std::stoll(field[1]));
      r.phase = parse_phase(field[2]).value_or(Phase::kOther);
      f.listed.push_back(r);
    }
  }
  return f;
}

TEST(CudaGraphReplaysOnAnH200, NearlyAllOfTheGraphsGpuTimeAfterTheirFirstCallsIsInListedCalls) {
  const Fixture f = read_fixture(AMPSCOPE_FIXTURES_DIR "/h200-gpt2-cudagraphs-records.tsv");
  ASSERT_GE(f.ops_by_step.size(), 5u) << "missing fixture " AMPSCOPE_FIXTURES_DIR "/h200-gpt2-cudagraphs-records.tsv";
  CompiledKernelTimes times;
  for (size_t step = 1; step < f.ops_by_step.size(); ++step) {
    times.add_ops(f.ops_by_step[step]);
    if (step < f.kernels_by_step.size()) times.add_kernels(pointers(f.kernels_by_step[step]));
  }
  const auto rows = join_compiled_kernels(f.listed, times);
  const CompiledTimeShare share = compiled_time_share(rows);
  ASSERT_TRUE(share.has_later_calls());
  EXPECT_GE(share.gpu_kernel_share_after_first_calls(), 0.95) << compiled_share_text(share);
  // Over all calls, with the first calls' tuning put on the kernels it tuned (issue 28's 95 %).
  EXPECT_GE(share.gpu_attributed_share(), 0.95) << compiled_share_text(share);

  // As recorded, before the alignment: the replays' GEMMs and attention are unlisted.
  std::set<CompiledKernelTimes::Key> named;
  for (const CompiledKernelRow& r : f.listed) named.insert({r.graph, r.kernel, r.ordinal});
  int64_t graphs_later = 0, listed_later = 0;
  for (const auto& [key, t] : times.times()) {
    if (std::get<1>(key).empty()) graphs_later += t.gpu_time_ns - t.first_call_gpu_ns;
    else if (named.contains(key)) listed_later += t.gpu_time_ns - t.first_call_gpu_ns;
  }
  EXPECT_LT(static_cast<double>(listed_later) / static_cast<double>(graphs_later), 0.5);

  // Each of the forward's 48 addmm calls: its eager call and three replays, on Tensor Cores.
  int addmm = 0;
  for (const CompiledKernelRow& r : rows) {
    if (r.graph != 0 || r.kind != kCompiledExternKernel || r.kernel != "aten::addmm") continue;
    ++addmm;
    EXPECT_EQ(r.calls, 4) << "addmm #" << r.ordinal;
    EXPECT_GE(r.tensor_core_kernels, 4) << "addmm #" << r.ordinal;
  }
  EXPECT_EQ(addmm, 48);
}

// With step 1 (the graphs' eager calls and tuning) kept apart, as the op table leaves the
// warm-up step out: the rows hold the replays alone, aligned as before (the eager call
// still names the replays' kernels). Peer for the graphs' time: the same records' step 1 alone.
TEST(CudaGraphReplaysOnAnH200, WithoutTheWarmUpStepTheRowsHoldTheReplaysAlone) {
  const Fixture f = read_fixture(AMPSCOPE_FIXTURES_DIR "/h200-gpt2-cudagraphs-records.tsv");
  ASSERT_GE(f.ops_by_step.size(), 5u) << "missing fixture " AMPSCOPE_FIXTURES_DIR "/h200-gpt2-cudagraphs-records.tsv";
  CompiledKernelTimes times, first_step;
  times.keep_step_apart(1);
  for (size_t step = 1; step < f.ops_by_step.size(); ++step) {
    times.add_ops(f.ops_by_step[step]);
    if (step == 1) first_step.add_ops(f.ops_by_step[step]);
    if (step >= f.kernels_by_step.size()) continue;
    times.add_kernels(pointers(f.kernels_by_step[step]));
    if (step == 1) first_step.add_kernels(pointers(f.kernels_by_step[step]));
  }
  const auto all = join_compiled_kernels(f.listed, times);
  const auto later = join_compiled_kernels(f.listed, times, true);
  const auto first = join_compiled_kernels(f.listed, first_step);
  std::map<int64_t, std::array<int64_t, 3>> graph_gpu;  // graph -> every step's, later, step 1's
  for (const auto& [rows, i] : {std::pair{&all, 0}, std::pair{&later, 1}, std::pair{&first, 2}})
    for (const CompiledKernelRow& r : *rows)
      if (r.kind == kCompiledGraphCall) graph_gpu[r.graph][static_cast<size_t>(i)] = r.gpu_time_ns;
  ASSERT_FALSE(graph_gpu.empty());
  for (const auto& [graph, gpu] : graph_gpu) {
    EXPECT_GT(gpu[1], 0) << "graph " << graph;
    EXPECT_EQ(gpu[1], gpu[0] - gpu[2]) << "graph " << graph;
  }
  for (const CompiledKernelRow& r : later) {
    EXPECT_GE(std::min({r.calls, r.cpu_time_ns, r.kernels, r.gpu_time_ns, r.first_call_gpu_ns}), 0) << r.kernel;
    EXPECT_EQ(r.first_call_gpu_ns, 0) << r.kernel << ": every first call was step 1's";
    EXPECT_NE(r.kind, kCompiledTuningCall) << r.kernel << ": tuning ran in the first calls alone";
  }
  int addmm = 0;
  for (const CompiledKernelRow& r : later) {
    if (r.graph != 0 || r.kind != kCompiledExternKernel || r.kernel != "aten::addmm") continue;
    ++addmm;
    EXPECT_EQ(r.calls, 3) << "addmm #" << r.ordinal << ": its three replays";
    EXPECT_GE(r.tensor_core_kernels, 3) << "addmm #" << r.ordinal;
  }
  EXPECT_EQ(addmm, 48);
  const CompiledTimeShare share = compiled_time_share(later);
  EXPECT_GE(share.gpu_kernel_share(), 0.95) << compiled_share_text(share);
}

// The worker saves the tables every two seconds while records still arrive, and keeps
// each graph's alignment until more records change it: tables saved along the way
// must end where one join over all the records does.
TEST(CudaGraphReplaysOnAnH200, TablesSavedWhileRecordsArriveEndWhereOneJoinOverAllOfThemDoes) {
  const Fixture f = read_fixture(AMPSCOPE_FIXTURES_DIR "/h200-gpt2-cudagraphs-records.tsv");
  ASSERT_GE(f.ops_by_step.size(), 5u) << "missing fixture " AMPSCOPE_FIXTURES_DIR "/h200-gpt2-cudagraphs-records.tsv";
  CompiledKernelTimes saved_along, at_once;
  std::vector<CompiledKernelRow> along;
  for (size_t step = 1; step < f.ops_by_step.size(); ++step) {
    for (CompiledKernelTimes* times : {&saved_along, &at_once}) times->add_ops(f.ops_by_step[step]);
    if (step >= f.kernels_by_step.size()) continue;
    // Kernels come in buffers: half a step's, a save, then the rest.
    const std::vector<KernelRecord>& kernels = f.kernels_by_step[step];
    const auto half = kernels.begin() + static_cast<std::ptrdiff_t>(kernels.size() / 2);
    saved_along.add_kernels(pointers({kernels.begin(), half}));
    along = join_compiled_kernels(f.listed, saved_along);
    saved_along.add_kernels(pointers({half, kernels.end()}));
    along = join_compiled_kernels(f.listed, saved_along);
    at_once.add_kernels(pointers(kernels));
  }
  const auto whole = join_compiled_kernels(f.listed, at_once);
  const auto fields = [](const CompiledKernelRow& r) {
    return std::tuple(r.graph, r.kind, r.kernel, r.ordinal, r.calls, r.kernels, r.tensor_core_kernels, r.gpu_time_ns,
                      r.first_call_gpu_ns);
  };
  ASSERT_EQ(along.size(), whole.size());
  int64_t extern_gpu_ns = 0;
  for (size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(fields(along[i]), fields(whole[i])) << whole[i].kernel << " #" << whole[i].ordinal;
    if (whole[i].kind == kCompiledExternKernel) extern_gpu_ns += whole[i].gpu_time_ns;
  }
  EXPECT_GT(extern_gpu_ns, 0) << "the replays' library kernels joined to their extern calls";
}

}  // namespace
