#pragma once
// The profiler as the training loop sees it: a TrainingObserver that records
// ops (OpObserver), GPU activity (cupti::ActivitySource) and gradient ranges,
// aggregates them into the op table, writes the session file and publishes
// snapshots for a live viewer.
//
// Threads:
//  - training thread: the TrainingObserver calls. It only moves records into
//    the worker's queue and never waits. Steps (loss, loss scale, skips) and
//    optimizer decisions are never dropped; a step's ops are taken only when
//    the queue is less than half full and fewer than op_backlog_limit op records
//    wait at the step's start (or draining since the last fall-back), else the op
//    sampling rule falls back to a wider stride
//    (OpSamplingRule, recorded in the session);
//    kernel, gradient and activation batches drop and are counted when it is full.
//  - profiler worker: aggregation, session writes, snapshots. Owns aggregator_
//    and the kernel summaries; nothing else touches them.
//  - CUPTI processing thread: on_kernels(), which enqueues like the training thread.
//  - any thread: snapshot(), under snapshot_mutex_.
// Lock order: queue_mutex_ and snapshot_mutex_ are never held together.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>

#include "engine/training_observer.h"
#include "profiler/analysis/compiled_kernels.h"
#include "profiler/analysis/kernel_aggregator.h"
#include "profiler/analysis/op_aggregator.h"
#include "profiler/analysis/warmup_step.h"
#include "profiler/capture/op_observer.h"
#include "profiler/capture_settings.h"
#include "profiler/cupti/activity_source.h"
#include "profiler/analysis/tensor_core_eligibility.h"
#include "profiler/op_sampling_rule.h"
#include "profiler/range_sample_phases.h"
#include "profiler/range_sample_spacing.h"
#include "profiler/recording_health.h"
#include "profiler/capture/activation_stats.h"
#include "profiler/capture/readiness_recorder.h"
#include "profiler/capture/backward_checks.h"
#include "profiler/capture/deferred_step_values.h"
#include "profiler/capture/sample_failure.h"
#include "profiler/capture/step_module_sink.h"
#include "profiler/analysis/profile_snapshot.h"
#include "profiler/store/session_writer.h"

namespace ampscope::profiler {

struct ProfilerOptions {
  std::string session_path;    // "" = keep nothing on disk (the GUI's live view only)
  bool overwrite = true;
  // Which steps' ops, range samples and readiness are recorded, and whether CUDA
  // kernels are traced (CUPTI, when training on CUDA).
  CaptureSettings capture;
  size_t queue_capacity = 256; // batches waiting for the worker; half of it is the ops' limit
  // Op records waiting for the worker and the session writer (together) at which the
  // op sampling rule falls back: ~0.5 KB each, so ~0.5 GiB. A launch-bound step
  // records ~8,000 ops; a writer slower than the training (two cores for three
  // busy threads) held 2.4 GiB after 1,000 steps under the batch limit alone.
  uint64_t op_backlog_limit = 1'000'000;
  // Per-step op times for the first this many recorded steps (OpStats::step_*_time_ns);
  // comparisons' profiled passes take medians of them. 0 = totals only.
  size_t op_step_samples = 0;
  // Ops each thread records per step at most; the rest are counted (meta
  // ops_over_step_budget). Bounds a step that never ends: a script with no
  // optimizer step, a huge gradient accumulation. ~200 bytes each while waiting.
  uint64_t step_op_budget = 500'000;
  // The op table and kernel table are stored this often while running, so a killed
  // run's session has them (up to the last save) as well as the raw records.
  std::chrono::milliseconds table_save_interval{2000};
  // Tests: the GPU activity source to trace with, on any device (a synthetic one).
  // Unset: CUPTI when training on CUDA (make_activity_source), nothing on the CPU.
  std::function<std::unique_ptr<cupti::ActivitySource>()> activity_source_factory;
  // Callers that are not engine runs (the Python capture) describe the session
  // themselves: called with the meta made from the run-start event, before the file is created.
  std::function<void(SessionMeta&)> describe_session;
  // Tests: runs before each part of a range sample's device work (sample_failure.h);
  // throwing from it fails that part as the device would.
  SampleFailure::Fault sample_fault_for_tests;
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
  // What the recording lost so far: dropped batches, the session writer's
  // drops and last error. Any thread (the GUI polls it; profiler_health.cpp).
  RecordingHealth health() const;
  // Whether the op sampling rule records this step's ops (training thread: the
  // rule widens when the capture falls behind).
  bool step_is_sampled(int64_t step) const;

  void on_run_start(const engine::RunStartedEvent& run) override;
  void on_parameters(const engine::NamedTensors& parameters) override;
  void on_step_begin(int64_t step) override;
  bool wants_gradients(int64_t step) override;
  // Whether the step begun last measures precision readiness: a range sample that is
  // the first or an Nth one (ProfilerOptions::readiness_every). Training thread.
  bool wants_readiness() const { return step_sink_.readiness != nullptr; }
  // Whether the step begun last measures module outputs' ranges (a range sample). Training thread.
  bool wants_activations() const { return step_sink_.activations != nullptr; }
  void on_unscaled_gradients(int64_t step, const engine::NamedTensors& parameters, double loss_scale) override;
  void on_step_end(const engine::StepEvent& step) override { on_step_end(step, {}, {}); }
  // A Python loop's step end, with its optimizers' rows (none: the engine's, from `step`),
  // its loss, gradient norm and GradScaler state perhaps still on the device: the records
  // wait for them (deferred_step_values.h) and the training thread does not.
  void on_step_end(const engine::StepEvent& step, const StepDeviceValues& device_values,
                   std::vector<OptimizerStepRecord> optimizer_rows);
  // A Python loop's lr_scheduler.step() calls (training thread): stored once the step
  // each followed has left (whether GradScaler skipped it is known then).
  void on_scheduler_steps(std::vector<SchedulerStepRecord> calls);
  // A copy of GradScaler's state before update() changes it, on its device without a
  // wait (scaler_state_copy), as the profiler's own work.
  at::Tensor copy_scaler_state(const at::Tensor& scale, const at::Tensor& growth_tracker,
                               const std::vector<std::vector<at::Tensor>>& found_inf);
  // Waits for the device values of the steps held so far and stores them (a step that
  // waited for the device anyway, whose values decide what the next one checks).
  void wait_for_step_values() { hand_over_steps(/*wait=*/true); }
  // The newest step record stored (its values read), or none yet. Training thread.
  const std::optional<StepRecord>& newest_stored_step() const { return step_values_.newest_ready(); }
  // A backward pass checked for non-finite gradients (the engine's, or a Python loop's):
  // stored, never dropped, and summarized in the snapshot. Training thread.
  void on_backward_check(BackwardCheck check);
  void on_run_end(engine::RunState final_state, const std::string& message) override;
  // A Linear or convolution layer's input and weight before its GEMM, on a
  // gradient-sampled step, for callers that see layers themselves (python/: module
  // hooks); the engine's models hand them over through the activation sink.
  // Calls from another thread than the one that began the step (DataParallel's
  // replicas run their forward in threads of their own) are ignored.
  void on_layer_input(std::string_view layer, const at::Tensor& input, const at::Tensor& weight);
  // A module's output (`module`: its path, "blocks.2.mlp") on a range-sampled step, for
  // callers that see modules themselves (python/: forward hooks); the engine's models hand
  // theirs over through the activation sink. Other threads' calls are ignored, as above.
  void on_module_output(std::string_view module, const at::Tensor& output);
  // A weight held [in, out] (ReadinessRecorder::note_in_by_out), from the training thread.
  void note_weight_in_by_out(const at::Tensor& weight);
  // A GEMM layer's weight under its layer's name (ReadinessRecorder::note_gemm_weight), likewise.
  void note_gemm_weight(std::string layer, const at::Tensor& weight);

  // For callers that feed the steps themselves (python/: a user's training loop):
  // what the engine's events do not carry, written to the session as is. Any
  // thread, after on_run_start and before on_run_end; without a session, nothing.
  // Defined in profiler_feed.cpp.
  void set_meta_value(std::string key, std::string value);
  // The ops of torch.compile's graphs as op table rows (compiled_op_rows), replacing
  // the previous set when a graph is compiled; their graphs' calls on profiled steps,
  // every step. Saved and shown with the recorded ops from the next save on.
  void set_compiled_op_signatures(std::vector<CompiledOpSignature> signatures);
  // `warmup_calls`: of `calls`, the warm-up step's (kWarmupStep), left out with its ops.
  void set_compiled_graph_calls(std::vector<int64_t> calls, std::vector<int64_t> warmup_calls = {});
  // The calls of inductor's compiled graphs, without times (profiler/analysis/
  // compiled_kernels.h), replacing the previous list: saved with their times.
  void set_compiled_kernels(std::vector<CompiledKernelRow> rows);

 private:
  struct OpsJob { OpBatch ops; };  // made into OpRecords on the worker, off the training thread
  struct KernelsJob { std::vector<KernelRecord> kernels; };
  struct GradientsJob { std::vector<GradientSample> samples; };
  struct StepJob { StepRecord step; };
  struct ActivationsJob { std::vector<ActivationSample> samples; };
  struct ReadinessJob { std::vector<ReadinessSample> samples; };
  struct BackwardCheckJob { BackwardCheck check; };
  struct PublishJob {};
  struct RangeSamplingJob { std::string text; };  // how range samples are taken, in words
  struct FinishJob {};  // the recording ended: give up on kernels still waiting, save the tables
  using Job = std::variant<OpsJob, KernelsJob, GradientsJob, StepJob, PublishJob, ActivationsJob, ReadinessJob,
                           FinishJob, BackwardCheckJob, RangeSamplingJob>;

  void on_kernels(std::vector<KernelRecord>&& batch) override;
  void enqueue(Job job, bool may_drop = true);
  static bool is_record_batch(const Job& job);
  void worker_loop();
  void process(Job& job);
  void publish_snapshot();
  void finish_recording();
  // The range samples' spacing in words, to the worker (at the start and at each change).
  void hand_over_range_sampling();
  // Tracing only on sampled steps (training thread).
  void resume_gpu_tracing();
  void pause_gpu_tracing();
  // Worker: the profiler's own kernels (own_work.h) leave the batch for own_kernels_.
  void set_aside_own_kernels(std::vector<KernelRecord>& kernels);
  // Worker: kernels the op aggregator settled go to the kernel table and the store.
  void take_settled_kernels();
  // Worker: the op table with Tensor Core eligibility and notes (live and stored alike).
  // The op table as saved and shown: the warm-up step left out where it is (warmup_step.h).
  OpTable annotated_op_stats() const;
  // The completed steps `table` covers, as saved (meta kProfiledSteps) and shown.
  int64_t table_steps(const OpTable& table) const;
  // The kernel table and GPU attribution over the steps `table` covers.
  const KernelAggregator& kernel_table(const OpTable& table) const;
  GpuAttribution gpu_attribution(const OpTable& table) const;
  void save_tables();
  // When the next publish or table save is due (nullopt: nothing waits), and doing
  // those that are due at `now`. Worker thread.
  std::optional<std::chrono::steady_clock::time_point> next_flush_due() const;
  void flush_due(std::chrono::steady_clock::time_point now);
  // Training thread: op batches waiting for the worker, or the session writer's
  // queue scaled to the worker's capacity, whichever is fuller; and the op records
  // waiting for the two together.
  OpSamplingRule::Backlog recording_backlog();
  // The op sampling rule changed its stride: health() and the session's meta say so.
  void publish_rule_change();
  // Training thread: the step's ops (and the count of those over budget) to the worker.
  void hand_over_ops(int64_t step);
  // Training thread: once a range sample failed, its step's partial sample is dropped,
  // the sinks go null and the session says why (once).
  void on_sample_stopped();
  // Training thread: a part of a range sample's device work (sample_failure.h); false if
  // it failed (now or before), and then the step's sample is dropped.
  template <class Work>
  bool sample_part(std::string_view part, Work&& work) {
    if (sample_failure_.run(part, std::forward<Work>(work))) return true;
    on_sample_stopped();
    return false;
  }
  // Training thread: step records whose values have reached the host (all with `wait`),
  // with their optimizers' rows and the scheduler calls that followed them.
  void hand_over_steps(bool wait);
  // Rows the writer stores as they come (profiler_feed.cpp).
  void append_optimizer_steps(std::vector<OptimizerStepRecord>&& records);
  void append_scheduler_steps(std::vector<SchedulerStepRecord>&& records);
  // A stop inside a step: that step's ops are counted and dropped (training thread);
  // its kernels too, as the worker meets them (set_aside_interrupted_kernels).
  void drop_interrupted_step();
  void set_aside_interrupted_kernels(std::vector<KernelRecord>& kernels);

  ProfilerOptions options_;
  OpObserver observer_;
  std::unique_ptr<cupti::ActivitySource> gpu_source_;
  std::unique_ptr<SessionWriter> writer_;
  std::atomic<const SessionWriter*> writer_published_{nullptr};  // writer_ for other threads, once created
  std::string gpu_tracing_;
  int64_t profiled_steps_since_flush_ = 0;
  bool gpu_tracing_paused_ = false;   // training thread only
  Tf32Settings tf32_;          // in force at run start: decides fp32 ops' eligibility
  ActivationRecorder activations_;  // training thread: module outputs of gradient-sampled steps
  ReadinessRecorder readiness_;     // training thread: layers' tensors of readiness steps
  int64_t range_samples_begun_ = 0;  // training thread: range-sampled steps begun so far
  std::thread::id step_thread_;     // the training thread: the one that began the current step
  // Training thread: module gradients of the checked steps (gradient-sampled ones, and
  // those after a skipped step or a growth of the loss scale), and what the models'
  // ModuleScopes feed on such steps (to the activation ranges, readiness and checks).
  BackwardCheckRecorder backward_checks_recorder_;
  StepModuleSink step_sink_;
  DeferredStepValues step_values_;  // training thread: step records waiting for their device values
  // Training thread: a range sample's device work; the first failure stops range samples.
  SampleFailure sample_failure_{options_.sample_fault_for_tests};
  bool sample_stop_published_ = false;  // training thread
  bool check_next_step_ = false;  // the last step skipped, or grew the scale: check the next backward
  OpSamplingRule op_rule_;          // training thread: which steps' ops are recorded
  RangeSampleSpacing sample_spacing_;  // training thread: which steps take range samples
  RangeSamplePhases sample_phases_;    // training thread: where the samples' time went, summed

  // Worker state (worker thread only).
  OpAggregator aggregator_;
  // Every kernel, and every kernel but the warm-up step's: the table shown is the one whose
  // steps the op table covers (annotated_op_stats).
  KernelAggregator all_kernels_table_;
  KernelAggregator kernel_table_;
  int64_t warmup_unattributed_ns_ = 0;  // the warm-up step's kernels with no op
  bool tables_dirty_ = false;
  std::chrono::steady_clock::time_point last_table_save_{};
  int64_t own_kernels_ = 0, own_gpu_ns_ = 0;  // the profiler's own GPU work, never the user's
  std::unordered_map<std::string, std::pair<int64_t, int64_t>> own_by_name_;  // kernel name -> calls, GPU ns
  std::vector<GradientSample> latest_gradients_;
  std::deque<GradientSample> gradient_history_;
  std::vector<ActivationSample> latest_activations_;
  std::optional<ActivationSample> first_fp16_overflow_;
  ReadinessTotals readiness_totals_;
  std::string range_sampling_;
  std::vector<BackwardCheck> backward_checks_;  // one per checked step: the snapshot's summary
  int64_t skipped_steps_ = 0;                   // steps GradScaler skipped, checked or not
  int64_t last_step_ = 0;
  static constexpr int64_t kNoStep = std::numeric_limits<int64_t>::min();
  int64_t profiled_steps_ = 0;       // completed steps whose ops were recorded, the warm-up step's included
  bool warmup_step_profiled_ = false;  // the warm-up step (kWarmupStep) among them
  bool warmup_meta_written_ = false;
  int64_t last_ops_step_ = kNoStep;  // the newest step any op was recorded in
  std::chrono::steady_clock::time_point last_publish_{};
  bool snapshot_dirty_ = false;  // processed since the last publish

  mutable std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::condition_variable queue_drained_;
  std::deque<Job> queue_;
  size_t records_waiting_ = 0;  // record batches in queue_ (ops, kernels, gradients, activations)
  size_t op_batches_waiting_ = 0;   // of which OpsJobs
  uint64_t op_records_waiting_ = 0; // the ops in those
  std::vector<OpSamplingRule::Fallback> op_fallbacks_;  // op_rule_'s, for health() on any thread
  std::string samples_stopped_why_;                     // sample_failure_'s, for health() on any thread
  std::atomic<int64_t> samples_stopped_step_{0};
  bool busy_ = false;
  bool stopping_ = false;
  std::atomic<uint64_t> dropped_{0};
  // Ops over the step budget, and the first step that went over (written by the
  // training thread, read by health() on any).
  std::atomic<uint64_t> ops_over_budget_{0};
  std::atomic<int64_t> first_step_over_budget_{0};
  // The step a stop interrupted (0: none), its ops not kept; kernels of ops with ids
  // from interrupted_first_op_id_ up are the worker's to drop (counted there).
  std::atomic<int64_t> interrupted_step_{0};
  std::atomic<uint64_t> interrupted_ops_{0};
  std::atomic<uint64_t> interrupted_first_op_id_{UINT64_MAX};
  std::atomic<uint64_t> interrupted_kernels_{0};
  std::thread worker_;

  mutable std::mutex snapshot_mutex_;
  ProfileSnapshotPtr snapshot_;

  // set_compiled_* (the training thread) -> the worker's table saves; held alone, and
  // only to swap these: the worker joins and counts on its own copies, so the training
  // thread never waits for a save (aligning a CUDA graph's replays took seconds).
  mutable std::mutex compiled_mutex_;
  std::shared_ptr<const std::vector<CompiledOpSignature>> compiled_op_signatures_;
  std::vector<int64_t> compiled_graph_calls_;
  std::vector<int64_t> compiled_warmup_graph_calls_;  // of those, the warm-up step's
  std::shared_ptr<const std::vector<CompiledKernelRow>> compiled_kernels_;
  CompiledKernelTimes compiled_kernel_times_;  // worker only
};

}  // namespace ampscope::profiler
