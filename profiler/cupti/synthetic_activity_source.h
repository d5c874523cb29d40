#pragma once
// An ActivitySource without a GPU, for tests of the tracer and of the layers
// above it (op capture, analysis). It behaves like CUPTI does: launch_*()
// called between push_external_id(op) and pop_external_id() on the same
// thread produces an external-correlation record, an API record and the
// activity itself, all sharing a fresh correlation id. Records are held until
// flush()/stop(), then fed to the RecordProcessor in launch order or, with a
// shuffle seed, in a random order (CUPTI's buffers arrive in any order).
// Thread-safe: one mutex around everything (it is a test double).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "profiler/cupti/activity_source.h"
#include "profiler/cupti/record_processor.h"
#include "profiler/cupti/tensor_core_rules.h"

namespace ampscope::profiler::cupti {

class SyntheticActivitySource final : public ActivitySource {
 public:
  explicit SyntheticActivitySource(std::shared_ptr<const TensorCoreRules> rules = nullptr,
                                   RecordProcessor::Options options = {});

  // Deliver records in a random order (deterministic per seed) at flush.
  void shuffle_with_seed(uint64_t seed);
  // Stand-in for a GPU in whole-profiler tests: every push_external_id launches one
  // kernel ("synthetic_kernel", 1 us) for that op, as if each op ran on a device.
  void launch_on_every_push(bool on);
  // Like CUPTI handing over a full buffer mid-step: deliver everything queued as
  // soon as `records` are waiting (0 = only at flush/stop).
  void deliver_every(size_t records);
  // Kernels launched so far (while tracing), and launches refused while paused.
  int64_t kernels_launched() const;
  int64_t launches_while_paused() const;

  // Each returns the correlation id it used. `name` may be mangled.
  uint32_t launch_kernel(std::string name, int64_t start_ns, int64_t end_ns, int32_t stream = 7);
  uint32_t launch_memcpy(uint32_t cupti_copy_kind, int64_t bytes, int64_t start_ns, int64_t end_ns);

  SourceStatus start(ActivitySink& sink) override;
  void flush() override;
  void stop() override;
  void pause() override;
  void resume() override;
  void push_external_id(uint64_t op_id) override;
  void pop_external_id() override;
  SourceStatus status() const override;
  ActivityStats stats() const override;

 private:
  using Record = std::variant<DeviceActivity, ApiActivity, ExternalCorrelation>;
  uint32_t launch_locked(DeviceActivity activity);
  void deliver_locked();

  std::shared_ptr<const TensorCoreRules> rules_;
  RecordProcessor::Options options_;
  mutable std::mutex mu_;
  std::unique_ptr<RecordProcessor> processor_;
  std::map<std::thread::id, std::vector<uint64_t>> stacks_;  // per-thread pushed op ids
  std::map<std::thread::id, uint32_t> thread_numbers_;
  std::vector<Record> queued_;
  uint32_t next_correlation_ = 1;
  std::optional<uint64_t> seed_;
  bool tracing_ = true;
  bool launch_on_push_ = false;
  size_t deliver_every_ = 0;
  int64_t kernels_launched_ = 0;
  int64_t launches_while_paused_ = 0;
  int64_t clock_ns_ = 1'000'000;
};

}  // namespace ampscope::profiler::cupti
