#pragma once
// CUPTI activity tracing behind the ActivitySource seam. Compiled only when
// CUPTI was found (AMPSCOPE_HAVE_CUPTI); the header has no CUPTI types so it
// can be included anywhere, but only link against it in such builds (use
// make_activity_source() to stay build-agnostic).
//
// Threads:
//   - op threads (training, autograd workers): push_external_id/pop_external_id
//     only; they touch CUPTI's per-thread external-id stack and an atomic flag.
//   - CUPTI's threads: buffer-requested / buffer-completed callbacks. Requested
//     takes a buffer from the pool; completed only queues {buffer, valid bytes}
//     and wakes the processing thread. No parsing in callbacks: they run inside
//     CUDA calls (and cuptiActivityFlushAll) and stall the application.
//   - the processing thread (ours): pops buffers, decodes records into the
//     RecordProcessor, hands batches to the sink, returns buffers to the pool.
//   - the controlling thread: start/flush/stop.
//
// Lock order (outer first): control_mu_ -> processor_mu_ -> queue_mu_ -> pool_mu_.
// queue_mu_ and pool_mu_ are leaves and are never held while calling CUPTI or
// the sink; CUPTI callbacks take only queue_mu_ or pool_mu_. The sink runs
// under processor_mu_, so it must not call back into this source.
//
// Only one CuptiActivitySource can be started at a time in a process (CUPTI's
// buffer callbacks are process-wide); a second start() reports unavailable.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "profiler/cupti/activity_source.h"
#include "profiler/cupti/record_processor.h"
#include "profiler/cupti/tensor_core_rules.h"

namespace ampscope::profiler::cupti {

class CuptiActivitySource final : public ActivitySource {
 public:
  struct Options {
    size_t buffer_bytes = 4 << 20;  // per CUPTI activity buffer
    size_t max_buffers = 64;        // pool cap (256 MiB): past it CUPTI drops records, counted
    RecordProcessor::Options processor;
  };

  explicit CuptiActivitySource(std::shared_ptr<const TensorCoreRules> rules);
  CuptiActivitySource(std::shared_ptr<const TensorCoreRules> rules, Options options);
  ~CuptiActivitySource() override;  // stops
  CuptiActivitySource(const CuptiActivitySource&) = delete;
  CuptiActivitySource& operator=(const CuptiActivitySource&) = delete;

  SourceStatus start(ActivitySink& sink) override;
  void flush() override;
  void request_flush() override;
  void stop() override;
  void pause() override;
  void resume() override;
  void push_external_id(uint64_t op_id) override;
  void pop_external_id() override;
  SourceStatus status() const override;
  ActivityStats stats() const override;

  // Called by the C callbacks in cupti_activity_source.cpp; not for users.
  uint8_t* request_buffer(size_t* size);
  void buffer_completed(uint8_t* buffer, size_t valid_bytes);

 private:
  struct Filled {
    uint8_t* buffer;
    size_t valid_bytes;
  };
  void process_loop();
  void process_buffer(const Filled& filled);  // under processor_mu_
  void wait_until_drained();
  void release_buffer(uint8_t* buffer);
  // Enables the activity kinds, then narrows the API kinds to launch/copy/set calls.
  // Returns the first failure (with the call's name in *call), CUPTI_SUCCESS if none.
  int enable_kinds(const char** call);
  void disable_kinds();
  void disable_all();  // disables, syncs the device, force-flushes, drains, unsubscribes, finalizes
  ActivityStats processor_stats() const;
  SourceStatus fail(std::string message);

  std::shared_ptr<const TensorCoreRules> rules_;
  Options options_;

  mutable std::mutex control_mu_;  // start/flush/stop, status_
  SourceStatus status_{false, "GPU tracing off: not started"};
  bool started_ = false;
  bool paused_ = false;              // kinds disabled between sampled steps
  std::vector<int> enabled_kinds_;   // CUpti_ActivityKind values enabled now
  void* subscriber_ = nullptr;       // our CUpti_SubscriberHandle, claims CUPTI for this process
  // Added to CUPTI's timestamps: 0 when our CLOCK_MONOTONIC callback is registered,
  // else the offset measured once at start (a degraded, still usable clock).
  int64_t timestamp_offset_ns_ = 0;

  // Read on every op enter/exit; true only between a successful start and stop.
  std::atomic<bool> tracing_{false};

  mutable std::mutex processor_mu_;
  std::unique_ptr<RecordProcessor> processor_;

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;    // filled buffer queued, or quit
  std::condition_variable drained_cv_;  // queue empty and processing thread idle
  std::deque<Filled> queue_;
  bool busy_ = false;  // the processing thread holds a popped buffer
  bool quit_ = false;
  std::thread worker_;

  std::mutex pool_mu_;
  std::vector<uint8_t*> free_buffers_;
  size_t allocated_buffers_ = 0;
  std::atomic<int64_t> refused_buffers_{0};  // requests answered with no buffer
};

}  // namespace ampscope::profiler::cupti
