// RecordProcessor: the kernel <-> op join through external correlation, fed
// synthetic CUPTI-like records in every order CUPTI's buffers could produce.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <thread>
#include <variant>

#include "profiler/cupti/record_processor.h"
#include "profiler/cupti/synthetic_activity_source.h"
#include "profiler/cupti/tensor_core_rules.h"

namespace ampscope::profiler::cupti {
namespace {

struct CollectingSink : ActivitySink {
  std::vector<KernelRecord> records;
  int batches = 0;
  void on_kernels(std::vector<KernelRecord>&& batch) override {
    ++batches;
    for (auto& r : batch) records.push_back(std::move(r));
  }
  const KernelRecord* by_correlation(uint64_t c) const {
    for (const auto& r : records)
      if (r.correlation_id == c) return &r;
    return nullptr;
  }
};

std::shared_ptr<const TensorCoreRules> test_rules() {
  return TensorCoreRules::parse(
      "s16816gemm yes cuBLAS MMA GEMM\n"
      "elementwise no PyTorch elementwise\n",
      "test_rules.txt");
}

DeviceActivity kernel(uint32_t correlation, std::string name, int64_t start, int64_t end) {
  DeviceActivity a;
  a.kind = ActivityKind::kKernel;
  a.correlation_id = correlation;
  a.name = std::move(name);
  a.start_ns = start;
  a.end_ns = end;
  return a;
}

using Record = std::variant<DeviceActivity, ApiActivity, ExternalCorrelation>;

// 50 ops, each launching two kernels, every fifth also a memcpy: correlation
// ids 1..110, all mapped. Correlations 1000..1009 are launched outside any op.
std::vector<Record> workload() {
  std::vector<Record> out;
  uint32_t c = 1;
  for (uint64_t op = 1; op <= 50; ++op) {
    for (int k = 0; k < 2; ++k, ++c) {
      out.emplace_back(ExternalCorrelation{op, c});
      out.emplace_back(ApiActivity{c, 211, 1, false, 0, 0});
      out.emplace_back(kernel(c,
                              k == 0 ? "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_64x3_tn"
                                     : "void at::native::vectorized_elementwise_kernel<4>()",
                              int64_t(c) * 100, int64_t(c) * 100 + 50));
    }
    if (op % 5 == 0) {
      out.emplace_back(ExternalCorrelation{op, c});
      DeviceActivity m;
      m.kind = ActivityKind::kMemcpy;
      m.correlation_id = c;
      m.name = memcpy_name(1);
      m.bytes = 4096;
      out.emplace_back(m);
      ++c;
    }
  }
  for (uint32_t u = 1000; u < 1010; ++u) out.emplace_back(kernel(u, "unmapped_kernel", 0, 10));
  return out;
}

void feed(RecordProcessor& p, std::vector<Record> records) {
  for (auto& r : records) std::visit([&](auto& rec) { p.add(std::move(rec)); }, r);
}

class ShuffledOrder : public ::testing::TestWithParam<int> {};

TEST_P(ShuffledOrder, EveryActivityMapsToItsOp) {
  auto records = workload();
  if (GetParam() == -1) {
    std::reverse(records.begin(), records.end());  // every activity before its mapping
  } else if (GetParam() > 0) {
    std::mt19937_64 rng(GetParam());
    std::shuffle(records.begin(), records.end(), rng);
  }
  CollectingSink sink;
  RecordProcessor p(sink, test_rules());
  feed(p, records);
  p.drain();
  // Everything with a mapping is out before flush; the 10 unmapped wait.
  EXPECT_EQ(sink.records.size(), 110u);
  EXPECT_EQ(p.pending(), 10u);
  p.flush();
  ASSERT_EQ(sink.records.size(), 120u);
  EXPECT_EQ(p.pending(), 0u);

  for (uint32_t c = 1; c <= 110; ++c) {
    const KernelRecord* r = sink.by_correlation(c);
    ASSERT_NE(r, nullptr) << c;
    EXPECT_GT(r->op_id, 0u) << c;
  }
  // Correlation ids 1..: op 1 -> {1,2}, op 5 -> {9,10, memcpy 11}.
  EXPECT_EQ(sink.by_correlation(1)->op_id, 1u);
  EXPECT_EQ(sink.by_correlation(2)->op_id, 1u);
  EXPECT_EQ(sink.by_correlation(11)->op_id, 5u);
  EXPECT_EQ(sink.by_correlation(11)->kind, ActivityKind::kMemcpy);
  EXPECT_EQ(sink.by_correlation(11)->name, "Memcpy HtoD");
  EXPECT_EQ(sink.by_correlation(11)->bytes, 4096);
  for (uint32_t u = 1000; u < 1010; ++u) EXPECT_EQ(sink.by_correlation(u)->op_id, 0u);

  const ActivityStats& s = p.stats();
  EXPECT_EQ(s.kernels, 110);
  EXPECT_EQ(s.memory_ops, 10);
  EXPECT_EQ(s.unmapped, 10);
  EXPECT_EQ(s.evicted_pending, 0);
  EXPECT_EQ(s.api_records, 100);
}

INSTANTIATE_TEST_SUITE_P(Orders, ShuffledOrder, ::testing::Values(0, -1, 1, 2, 3, 42, 1234));

TEST(RecordProcessor, TensorCoreFlagAndDemangledNames) {
  CollectingSink sink;
  RecordProcessor p(sink, test_rules());
  p.add(ExternalCorrelation{7, 1});
  p.add(kernel(1, "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_64x3_tn", 0, 100));
  // at::native::vectorized_elementwise_kernel<4, int>(int): mangled, as CUPTI reports it.
  p.add(ExternalCorrelation{7, 2});
  p.add(kernel(2, "_ZN2at6native29vectorized_elementwise_kernelILi4EiEEvi", 100, 150));
  p.add(ExternalCorrelation{7, 3});
  p.add(kernel(3, "_Znot_a_valid_mangling", 150, 160));
  p.flush();
  ASSERT_EQ(sink.records.size(), 3u);
  EXPECT_TRUE(sink.records[0].tensor_core_by_name);
  EXPECT_EQ(sink.records[1].name, "void at::native::vectorized_elementwise_kernel<4, int>(int)");
  EXPECT_FALSE(sink.records[1].tensor_core_by_name);
  EXPECT_EQ(sink.records[2].name, "_Znot_a_valid_mangling");  // left as is

  const auto totals = gpu_totals_by_op(sink.records);
  ASSERT_EQ(totals.count(7), 1u);
  EXPECT_EQ(totals.at(7).kernels, 3);
  EXPECT_EQ(totals.at(7).gpu_time_ns, 160);
  EXPECT_EQ(totals.at(7).tensor_core_kernels, 1);
  EXPECT_EQ(totals.at(7).tensor_core_gpu_time_ns, 100);
}

TEST(RecordProcessor, PendingIsBoundedOldestEvictedWithOpZero) {
  CollectingSink sink;
  RecordProcessor::Options options;
  options.max_pending = 4;
  RecordProcessor p(sink, nullptr, options);
  for (uint32_t c = 1; c <= 10; ++c) p.add(kernel(c, "k", c, c + 1));
  EXPECT_EQ(p.pending(), 4u);
  EXPECT_EQ(p.stats().evicted_pending, 6);
  // The survivors are the newest (7..10); their mappings still join.
  for (uint32_t c = 1; c <= 10; ++c) p.add(ExternalCorrelation{100 + c, c});
  p.flush();
  ASSERT_EQ(sink.records.size(), 10u);
  for (uint32_t c = 1; c <= 6; ++c) EXPECT_EQ(sink.by_correlation(c)->op_id, 0u) << c;
  for (uint32_t c = 7; c <= 10; ++c) EXPECT_EQ(sink.by_correlation(c)->op_id, 100u + c) << c;
  EXPECT_EQ(p.stats().unmapped, 6);
}

TEST(RecordProcessor, MappingsAgeOutAndServeManyActivities) {
  CollectingSink sink;
  RecordProcessor::Options options;
  options.max_mappings = 3;
  RecordProcessor p(sink, nullptr, options);
  for (uint32_t c = 1; c <= 5; ++c) p.add(ExternalCorrelation{c, c});
  // A graph launch: one correlation id, several kernels.
  p.add(kernel(5, "g1", 0, 1));
  p.add(kernel(5, "g2", 1, 2));
  p.add(kernel(1, "late", 2, 3));  // mapping 1 aged out: waits, then op 0
  p.flush();
  ASSERT_EQ(sink.records.size(), 3u);
  EXPECT_EQ(sink.records[0].op_id, 5u);
  EXPECT_EQ(sink.records[1].op_id, 5u);
  EXPECT_EQ(sink.records[2].op_id, 0u);
}

TEST(RecordProcessor, BatchesAreBounded) {
  CollectingSink sink;
  RecordProcessor::Options options;
  options.batch_size = 8;
  RecordProcessor p(sink, nullptr, options);
  for (uint32_t c = 1; c <= 20; ++c) {
    p.add(ExternalCorrelation{1, c});
    p.add(kernel(c, "k", 0, 1));
  }
  EXPECT_EQ(sink.batches, 2);  // 16 out in full batches, 4 wait for drain
  p.drain();
  EXPECT_EQ(sink.batches, 3);
  EXPECT_EQ(sink.records.size(), 20u);
}

TEST(SyntheticActivitySource, NestedOpsAndThreads) {
  CollectingSink sink;
  SyntheticActivitySource src(test_rules());
  src.shuffle_with_seed(9);
  ASSERT_TRUE(src.start(sink).available);
  const uint32_t outside = src.launch_kernel("before_any_op", 0, 1);
  src.push_external_id(10);
  const uint32_t in10 = src.launch_kernel("ampere_fp16_s16816gemm_fp16_64x64_tn", 10, 20);
  src.push_external_id(11);  // nested op: the innermost id names the launch
  const uint32_t in11 = src.launch_memcpy(2, 512, 20, 30);
  src.pop_external_id();
  const uint32_t back10 = src.launch_kernel("elementwise", 30, 40);
  uint32_t other_thread = 0;
  std::thread t([&] {
    src.push_external_id(20);  // autograd worker thread: its own stack
    other_thread = src.launch_kernel("bwd", 40, 50);
    src.pop_external_id();
  });
  t.join();
  src.pop_external_id();
  src.flush();
  EXPECT_EQ(sink.records.size(), 4u);  // the unmapped one waits
  src.stop();
  ASSERT_EQ(sink.records.size(), 5u);
  EXPECT_EQ(sink.by_correlation(outside)->op_id, 0u);
  EXPECT_EQ(sink.by_correlation(in10)->op_id, 10u);
  EXPECT_TRUE(sink.by_correlation(in10)->tensor_core_by_name);
  EXPECT_EQ(sink.by_correlation(in11)->op_id, 11u);
  EXPECT_EQ(sink.by_correlation(in11)->name, "Memcpy DtoH");
  EXPECT_EQ(sink.by_correlation(back10)->op_id, 10u);
  EXPECT_EQ(sink.by_correlation(other_thread)->op_id, 20u);
  EXPECT_EQ(src.stats().unmapped, 1);
}

}  // namespace
}  // namespace ampscope::profiler::cupti
