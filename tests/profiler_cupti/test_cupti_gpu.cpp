// End to end on a real GPU: an fp16 GEMM and a copy launched between
// push_external_id/pop_external_id come back as KernelRecords with that op id,
// on the CPU's clock, the GEMM flagged Tensor Core by name. Skipped without
// CUPTI, a GPU, or when another profiler holds CUPTI. LibTorch here only
// launches work; the tracer itself does not use it.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "profiler/cupti/activity_source.h"

namespace ampscope::profiler::cupti {
namespace {

struct CollectingSink : ActivitySink {
  std::vector<KernelRecord> records;
  void on_kernels(std::vector<KernelRecord>&& batch) override {
    for (auto& r : batch) records.push_back(std::move(r));
  }
};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

TEST(CuptiGpu, KernelsJoinOpsOnTheCpuClock) {
  if (!built_with_cupti()) GTEST_SKIP() << "built without CUPTI";
  if (!at::hasCUDA()) GTEST_SKIP() << "LibTorch sees no CUDA";
  auto source = make_activity_source();
  CollectingSink sink;
  const SourceStatus s = source->start(sink);
  if (!s.available) GTEST_SKIP() << s.message;

  const auto opts = at::TensorOptions().device(at::kCUDA).dtype(at::kHalf);
  at::Tensor a = at::randn({4096, 4096}, opts), b = at::randn({4096, 4096}, opts);
  (void)a.sum().item<float>();  // warm up outside any op
  const int64_t t0 = now_ns();
  source->push_external_id(101);
  at::Tensor c = at::mm(a, b);
  source->pop_external_id();
  source->push_external_id(102);
  at::Tensor h = c.to(at::kCPU);
  source->pop_external_id();
  const int64_t t1 = now_ns();
  source->flush();
  source->stop();

  int gemms = 0, copies = 0;
  int64_t copied = 0;
  for (const KernelRecord& r : sink.records) {
    std::cout << r.op_id << " " << (r.tensor_core_by_name ? "TC " : "   ") << r.name.substr(0, 100)
              << "\n";
    if (r.op_id == 101 && r.kind == ActivityKind::kKernel) {
      ++gemms;
      EXPECT_TRUE(r.tensor_core_by_name) << r.name;
      EXPECT_GE(r.start_ns, t0);
      EXPECT_LE(r.end_ns, t1);
    }
    if (r.op_id == 102 && r.kind == ActivityKind::kMemcpy) {
      ++copies;
      EXPECT_EQ(r.name, "Memcpy DtoH");
      copied += r.bytes;  // a pageable copy may come as several records
    }
  }
  EXPECT_GE(gemms, 1);
  EXPECT_GE(copies, 1);
  EXPECT_EQ(copied, int64_t{4096} * 4096 * 2);
  std::cout << "dropped by CUPTI: " << source->stats().dropped_by_cupti << "\n";
}

}  // namespace
}  // namespace ampscope::profiler::cupti
