// The CUPTI-backed source on whatever machine runs the tests: with no GPU (or
// another profiler holding CUPTI) start() must report unavailable with a
// one-line message and leave the process usable; with a GPU it must start.
#include <gtest/gtest.h>

#include <iostream>

#include "profiler/cupti/activity_source.h"
#include "profiler/cupti/tensor_core_rules.h"
#ifdef AMPSCOPE_HAVE_CUPTI
#include "profiler/cupti/cupti_activity_source.h"
#endif

namespace ampscope::profiler::cupti {
namespace {

struct NullSink : ActivitySink {
  size_t records = 0;
  void on_kernels(std::vector<KernelRecord>&& batch) override { records += batch.size(); }
};

TEST(ActivitySource, FactoryMatchesBuild) {
  auto source = make_activity_source();
  ASSERT_NE(source, nullptr);
  if (!built_with_cupti()) {
    NullSink sink;
    const SourceStatus s = source->start(sink);
    EXPECT_FALSE(s.available);
    EXPECT_NE(s.message.find("GPU tracing off"), std::string::npos);
  }
}

TEST(CuptiActivitySource, StartNeverThrowsAndReportsWhy) {
#ifndef AMPSCOPE_HAVE_CUPTI
  GTEST_SKIP() << "built without CUPTI";
#else
  CuptiActivitySource source(TensorCoreRules::load(TensorCoreRules::default_path()));
  NullSink sink;
  const SourceStatus s = source.start(sink);
  if (s.available) {
    // A GPU machine: bracket a few ids, flush and stop cleanly.
    source.push_external_id(1);
    source.pop_external_id();
    source.flush();
    source.stop();
    source.stop();  // idempotent
    SUCCEED() << "CUPTI tracing started on this machine";
    return;
  }
  std::cout << "start(): " << s.message << "\n";
  EXPECT_EQ(s.message.rfind("GPU tracing off: ", 0), 0u) << s.message;
  EXPECT_EQ(s.message.find('\n'), std::string::npos) << "message must be one line";
  EXPECT_EQ(source.status().message, s.message);
  // Inert after a failed start: none of these may crash or reach CUPTI.
  source.push_external_id(42);
  source.pop_external_id();
  source.pop_external_id();
  source.flush();
  source.stop();
  EXPECT_EQ(sink.records, 0u);
  // A second start is allowed to try again and fail the same way.
  EXPECT_FALSE(source.start(sink).available);
#endif
}

}  // namespace
}  // namespace ampscope::profiler::cupti
