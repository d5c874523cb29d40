#pragma once
// Records every ATen op call (forward, backward and optimizer) through a global
// RecordFunction callback, so autograd's worker threads are seen too.
//
// Threads: the callbacks run on whichever thread runs an op. Each thread keeps
// its open ops on a thread-local stack and appends finished records to its own
// buffer (its own spin lock, uncontended but for take()). take() runs on the
// training thread at the end of a step. Lock order: registry_mutex_, then a
// buffer's spin lock, held for a swap and nothing else; the spare parts' mutex
// (SpareParts) is taken alone. The hot path takes its own buffer's spin lock, the
// sequence table's (ops that create an autograd node, backward nodes) and, for a
// name its thread has not seen yet, the name table's mutex (and registry_mutex_
// once per thread), each alone.
//
// Hot path: what an op costs the thread that runs it is kept to copying ids and
// numbers. Op names and module paths are interned (small ids into a process-wide
// table that only grows), dtypes stay c10::ScalarType codes and shapes go into
// one reused array per thread; strings, dtype names and the autocast category
// are made by OpBatch::to_records(), which the profiler runs on its worker.
//
// Timestamps are raw ticks (profiler/capture/tick_clock.h), made nanoseconds by
// to_records().
//
// The callback is registered only for sampled steps (begin_step .. end_step),
// so unsampled steps pay nothing.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/capture/tick_clock.h"
#include "profiler/cupti/activity_source.h"
#include "profiler/records.h"

namespace ampscope::profiler {

namespace observer_detail {
class SpareParts;
}

// Where the script turned autocast off inside its autocast region, on the calling thread: the
// device types ("cuda", "cpu") whose autocast it turned off there, none when it left them. The
// Python capture sets it at torch.autocast(enabled=False)'s entry and exit; an op on those
// devices' autocast lists entered meanwhile is OpCategory::kAutocastOff. A thread's setting,
// not a scope: a step that starts inside the region (a teacher called first under it) keeps it.
void set_autocast_turned_off(const std::vector<std::string>& device_types);

// Whether autocast decides `op` ("aten::bmm") on that device type ("cuda", "cpu"): it is on
// autocast's lists there under a policy other than promote, so that running it with autocast
// turned off changes its precision (the ops OpCategory::kAutocastOff is for). For compiled
// graphs, whose ops the observer never sees entered.
bool autocast_decides(std::string_view op, std::string_view device_type);

// Finished ops from every thread in the compact form the callbacks write. Moving
// one is cheap, so the training thread hands it on as is.
class OpBatch {
 public:
  OpBatch();
  ~OpBatch();
  OpBatch(OpBatch&&) noexcept;
  OpBatch& operator=(OpBatch&&) noexcept;

  size_t size() const;
  bool empty() const { return size() == 0; }
  // Ops finished in the batch's time that were not recorded: their thread had used
  // up its budget for the step (OpObserver::set_step_op_budget).
  uint64_t over_budget() const;
  // The records, by start time.
  std::vector<OpRecord> to_records() &&;

  struct Part;  // one thread's buffer

 private:
  friend class OpObserver;
  void give_back_parts();
  std::vector<Part> parts_;
  TickSpan ticks_;  // the ops' ticks as steady-clock ns
  // Where the parts' buffers go once read, for the observer's threads to fill again.
  std::shared_ptr<observer_detail::SpareParts> spares_;
};

class OpObserver {
 public:
  OpObserver();
  ~OpObserver();  // unregisters if still registered
  OpObserver(const OpObserver&) = delete;
  OpObserver& operator=(const OpObserver&) = delete;

  // Brackets every recorded op with its id, so GPU work maps to the op that launched it.
  void set_activity_source(cupti::ActivitySource* source) { hooks_ = source; }
  // At most this many ops recorded per thread per step; the rest are counted
  // (OpBatch::over_budget), not kept. Bounds the memory of a step that never ends
  // (a script with no optimizer step, a huge gradient accumulation). Ops are cut
  // at entry, so every recorded op's parent is recorded too.
  void set_step_op_budget(uint64_t ops_per_thread) { step_op_budget_.store(ops_per_thread, std::memory_order_relaxed); }
  // Registers the callback; ops until end_step() belong to `step`.
  void begin_step(int64_t step);
  // The id of the first op of the step begun last: ops (and kernels) of that step have ids from it up.
  uint64_t first_op_id_of_step() const { return step_first_op_id_; }
  void end_step();
  bool recording() const { return handle_ != 0; }
  // Every op finished since the last take(), from every thread.
  OpBatch take();
  // take().to_records(), on the calling thread.
  std::vector<OpRecord> collect() { return take().to_records(); }
  uint64_t recorded_ops() const { return next_id_.load(std::memory_order_relaxed) - 1; }

  // Public for the C-style RecordFunction callbacks; not for other callers.
  struct ThreadState;
  struct SequenceTable;
  ThreadState& thread_state();
  std::atomic<uint64_t> next_id_{1};
  std::atomic<int64_t> step_{0};
  std::atomic<uint64_t> step_op_budget_{UINT64_MAX};
  // Bumped by each registration: a thread's state left over from an earlier
  // registration (an op still open when end_step() ran) is dropped on first use.
  std::atomic<uint64_t> generation_{0};
  cupti::ActivitySource* hooks_ = nullptr;
  // The ops that created autograd nodes (forward ops, and a create_graph backward's), by
  // thread and sequence number, so backward ops can name their module.
  const std::unique_ptr<SequenceTable> node_creators_;

 private:
  static std::atomic<uint64_t> next_serial_;
  const uint64_t serial_;  // keys thread-local state; unlike `this`, never reused
  uint64_t handle_ = 0;
  uint64_t step_first_op_id_ = 1;  // the caller's thread (begin_step's)
  // Where the ticks of the ops not taken yet begin (the caller's thread).
  TickPair span_start_;
  bool span_open_ = false;
  std::mutex registry_mutex_;
  std::vector<std::shared_ptr<ThreadState>> threads_;
  uint32_t next_thread_number_ = 1;
  const std::shared_ptr<observer_detail::SpareParts> spares_;
};

}  // namespace ampscope::profiler
