#pragma once
// Records every ATen op call (forward, backward and optimizer) through a global
// RecordFunction callback, so autograd's worker threads are seen too.
//
// Threads: the callbacks run on whichever thread runs an op. Each thread keeps
// its open ops on a thread-local stack and appends finished records to its own
// buffer (its own mutex, uncontended but for collect()). collect() runs on the
// training thread at the end of a step. Lock order: registry_mutex_, then a
// buffer's mutex; the hot path takes only its own buffer's mutex.
//
// The callback is registered only for sampled steps (begin_step .. end_step),
// so unsampled steps pay nothing.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "profiler/cupti/activity_source.h"
#include "profiler/records.h"

namespace ampscope::profiler {

class OpObserver {
 public:
  OpObserver();
  ~OpObserver();  // unregisters if still registered
  OpObserver(const OpObserver&) = delete;
  OpObserver& operator=(const OpObserver&) = delete;

  // Brackets every recorded op with its id, so GPU work maps to the op that launched it.
  void set_activity_source(cupti::ActivitySource* source) { hooks_ = source; }
  // Registers the callback; ops until end_step() belong to `step`.
  void begin_step(int64_t step);
  void end_step();
  bool recording() const { return handle_ != 0; }
  // Every record finished since the last collect(), from every thread, by start time.
  std::vector<OpRecord> collect();
  uint64_t recorded_ops() const { return next_id_.load(std::memory_order_relaxed) - 1; }

  // Public for the C-style RecordFunction callbacks; not for other callers.
  struct ThreadState;
  ThreadState& thread_state();
  std::atomic<uint64_t> next_id_{1};
  std::atomic<int64_t> step_{0};
  cupti::ActivitySource* hooks_ = nullptr;
  // Forward ops by autograd sequence number, so backward ops can name their module.
  struct ForwardOrigin {
    uint64_t op_id = 0;   // the outermost forward op with this sequence number
    std::string module;
    bool autocast_cast = false;  // an autocast cast had it: its backward node casts the gradient back
  };
  std::mutex forward_mutex_;
  std::unordered_map<int64_t, ForwardOrigin> forward_by_sequence_nr_;

 private:
  static std::atomic<uint64_t> next_serial_;
  const uint64_t serial_;  // keys thread-local state; unlike `this`, never reused
  uint64_t handle_ = 0;
  std::mutex registry_mutex_;
  std::vector<std::shared_ptr<ThreadState>> threads_;
  uint32_t next_thread_number_ = 1;
};

}  // namespace ampscope::profiler
