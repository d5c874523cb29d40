#pragma once
// The profiler as the training loop sees it: a TrainingObserver that records
// ops (OpObserver), GPU activity (cupti::ActivitySource) and gradient ranges,
// aggregates them into the op table, writes the session file and publishes
// snapshots for a live viewer.
//
// Threads:
//  - training thread: the TrainingObserver calls. It only moves records into
//    the worker's bounded queue (a full queue drops and counts, never waits).
//  - profiler worker: aggregation, session writes, snapshots. Owns aggregator_
//    and the kernel summaries; nothing else touches them.
//  - CUPTI processing thread: on_kernels(), which enqueues like the training thread.
//  - any thread: snapshot(), under snapshot_mutex_.
// Lock order: queue_mutex_ and snapshot_mutex_ are never held together.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <optional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>

#include "engine/training_observer.h"
#include "profiler/analysis/op_aggregator.h"
#include "profiler/capture/op_observer.h"
#include "profiler/cupti/activity_source.h"
#include "profiler/capture/activation_stats.h"
#include "profiler/snapshot.h"
#include "profiler/store/session_writer.h"

namespace ampscope::profiler {

struct ProfilerOptions {
  std::string session_path;    // "" = keep nothing on disk (the GUI's live view only)
  bool overwrite = true;
  int64_t window_start = 1;    // first step whose ops are recorded
  int64_t window_steps = 0;    // how many steps from window_start; 0 = to the end of the run
  int64_t every_n_steps = 1;   // inside the window, record every Nth step
  int64_t gradient_every = 10; // gradient range statistics every K steps; 0 = never
  bool trace_gpu = true;       // CUPTI kernel tracing when training on CUDA
  size_t queue_capacity = 256; // batches waiting for the worker
  // Per-step op times for the first this many recorded steps (OpStats::step_*_time_ns);
  // comparisons' profiled passes take medians of them. 0 = totals only.
  size_t op_step_samples = 0;
};

class Profiler final : public engine::TrainingObserver, private cupti::ActivitySink {
 public:
  explicit Profiler(ProfilerOptions options);
  ~Profiler() override;
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // Thread-safe; the latest published snapshot (never null).
  ProfileSnapshotPtr snapshot() const;
  // "cupti", or one line saying why GPU tracing is off. Valid after on_run_start.
  std::string gpu_tracing() const;
  uint64_t dropped_batches() const { return dropped_.load(std::memory_order_relaxed); }
  bool step_is_sampled(int64_t step) const;

  void on_run_start(const engine::RunStartedEvent& run) override;
  void on_step_begin(int64_t step) override;
  bool wants_gradients(int64_t step) override;
  void on_unscaled_gradients(int64_t step, const engine::NamedTensors& parameters, double loss_scale) override;
  void on_step_end(const engine::StepEvent& step) override;
  void on_run_end(engine::RunState final_state, const std::string& message) override;

 private:
  struct OpsJob { OpBatch ops; };  // made into OpRecords on the worker, off the training thread
  struct KernelsJob { std::vector<KernelRecord> kernels; };
  struct GradientsJob { std::vector<GradientSample> samples; };
  struct StepJob { StepRecord step; };
  struct ActivationsJob { std::vector<ActivationSample> samples; };
  struct PublishJob {};
  using Job = std::variant<OpsJob, KernelsJob, GradientsJob, StepJob, PublishJob, ActivationsJob>;

  void on_kernels(std::vector<KernelRecord>&& batch) override;
  void enqueue(Job job, bool may_drop = true);
  void worker_loop();
  void process(Job& job);
  void publish_snapshot();
  void finish_recording();

  ProfilerOptions options_;
  OpObserver observer_;
  std::unique_ptr<cupti::ActivitySource> gpu_source_;
  std::unique_ptr<SessionWriter> writer_;
  std::string gpu_tracing_;
  int64_t profiled_steps_since_flush_ = 0;
  ActivationRecorder activations_;  // training thread: module outputs of gradient-sampled steps

  // Worker state (worker thread only).
  OpAggregator aggregator_;
  std::unordered_map<std::string, KernelSummary> kernel_summaries_;
  std::unordered_map<std::string, std::unordered_map<std::string, int64_t>> kernel_launchers_;
  std::vector<GradientSample> latest_gradients_;
  std::deque<GradientSample> gradient_history_;
  std::vector<ActivationSample> latest_activations_;
  std::optional<ActivationSample> first_fp16_overflow_;
  int64_t last_step_ = 0;
  std::chrono::steady_clock::time_point last_publish_{};

  std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::condition_variable queue_drained_;
  std::deque<Job> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::atomic<uint64_t> dropped_{0};
  std::thread worker_;

  mutable std::mutex snapshot_mutex_;
  ProfileSnapshotPtr snapshot_;
};

}  // namespace ampscope::profiler
