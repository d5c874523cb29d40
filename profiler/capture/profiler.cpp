#include "profiler/capture/profiler.h"

#include <ATen/Context.h>
#include <ATen/DeviceAccelerator.h>
#include <ATen/record_function.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "profiler/analysis/op_classifier.h"
#include "profiler/capture/gradient_stats.h"
#include "profiler/capture/own_work.h"
#include "profiler/capture/session_meta.h"
#include "profiler/capture/step_record.h"
#include "profiler/capture/tick_clock.h"
#include "profiler/analysis/tensor_core_eligibility.h"
#include "profiler/own_kernel_costs.h"
#include "profiler/session_meta_keys.h"
#include "profiler/thread_priority.h"

namespace ampscope::profiler {
namespace {

constexpr size_t kGradientHistorySteps = 64;
constexpr auto kPublishInterval = std::chrono::milliseconds(100);
// The profiler's own kernels named in the session: enough to see what a sample costs.
constexpr size_t kOwnKernelsKept = 12;

}  // namespace

bool Profiler::is_record_batch(const Job& job) {
  return !std::holds_alternative<StepJob>(job) && !std::holds_alternative<PublishJob>(job) &&
         !std::holds_alternative<FinishJob>(job) && !std::holds_alternative<BackwardCheckJob>(job) &&
         !std::holds_alternative<RangeSamplingJob>(job);
}

Profiler::Profiler(ProfilerOptions options)
    : options_(std::move(options)),
      op_rule_(options_.capture.window_start, options_.capture.window_steps, options_.capture.every_n_steps),
      sample_spacing_(options_.capture.gradient_every, options_.capture.sample_budget_percent,
                      options_.capture.readiness_every),
      aggregator_(kOpMemorySteps, options_.op_step_samples),
      snapshot_(std::make_shared<const ProfileSnapshot>()) {
  observer_.set_step_op_budget(options_.step_op_budget);
  aggregator_.keep_step_apart(kWarmupStep);  // before the worker sees an op
  compiled_kernel_times_.keep_step_apart(kWarmupStep);
  worker_ = std::thread([this] {
    lower_this_thread_priority();
    worker_loop();
  });
  name_thread(worker_, "amp-worker");
}

Profiler::~Profiler() {
  finish_recording();
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  queue_changed_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (writer_) writer_->close();
}

ProfileSnapshotPtr Profiler::snapshot() const {
  std::lock_guard lock(snapshot_mutex_);
  return snapshot_;
}

std::string Profiler::gpu_tracing() const { return gpu_tracing_; }

bool Profiler::step_is_sampled(int64_t step) const { return op_rule_.selects(step); }

void Profiler::on_run_start(const engine::RunStartedEvent& run) {
  const bool on_cuda = run.device.rfind("cuda", 0) == 0;
  // The TF32 switches the run trains with decide whether its fp32 GEMMs and
  // convolutions could use Tensor Cores.
  tf32_.matmul = at::globalContext().allowTF32CuBLAS();
  tf32_.cudnn = at::globalContext().allowTF32CuDNN();
  if (!on_cuda && !options_.activity_source_factory) {
    gpu_tracing_ = "off: training on the CPU (ops are timed on the CPU)";
  } else if (!options_.capture.trace_gpu) {
    gpu_tracing_ = "off: disabled by the user";
  } else {
    gpu_source_ = options_.activity_source_factory ? options_.activity_source_factory()
                                                   : cupti::make_activity_source();
    const cupti::SourceStatus status = gpu_source_->start(*this);
    gpu_tracing_ = status.available ? "cupti" : status.message;
    if (status.available) {
      observer_.set_activity_source(gpu_source_.get());
      activations_.set_activity_source(gpu_source_.get());
      readiness_.set_activity_source(gpu_source_.get());
      backward_checks_recorder_.set_activity_source(gpu_source_.get());
      // Nothing is traced until the first sampled step.
      gpu_source_->pause();
      gpu_tracing_paused_ = true;
    } else {
      gpu_source_.reset();
    }
  }
  // No kernel will come for an op: remembering where ops landed for late kernels would only
  // hold memory (a link per op for kOpMemorySteps steps: 22 MiB on a GPT-2 of 5,300 ops a step).
  // Set before the first record batch is queued, which the worker reads after.
  if (!gpu_source_) aggregator_.set_op_memory_steps(1);
  sample_spacing_.set_last_step(run.config.steps);  // a script's max_steps; 0 where it has none
  hand_over_range_sampling();
  if (options_.session_path.empty()) return;
  SessionMeta meta = make_session_meta(run);
  meta.gpu_tracing = gpu_tracing_;
  if (options_.describe_session) options_.describe_session(meta);
  SessionWriterOptions writer_options;
  writer_options.overwrite = options_.overwrite;
  // It stores this process's pid and host: each process (each rank under torchrun) is its
  // own process in the Chrome trace, and the GUI knows whether the run still goes.
  writer_ = SessionWriter::create(options_.session_path, meta, writer_options);
  writer_->set_meta_value(meta_key::kStepOpBudget, std::to_string(options_.step_op_budget));
  // What was asked for, so the GUI can run the session again as it was recorded.
  for (const auto& [key, value] : options_.capture.meta_entries()) writer_->set_meta_value(key, value);
  if (const int64_t last = sample_spacing_.early_last_step(); last > 0)
    writer_->set_meta_value(meta_key::kRangeSampleLastStep, std::to_string(last));
  writer_published_.store(writer_.get(), std::memory_order_release);
}

void Profiler::on_parameters(const engine::NamedTensors& parameters) {
  backward_checks_recorder_.set_parameters(parameters);
}

void Profiler::on_step_begin(int64_t step) {
  step_thread_ = std::this_thread::get_id();
  sample_failure_.begin_step(step);
  step_sink_.failure = &sample_failure_;
  // Activation ranges and precision readiness on the gradient-sampled steps, backward
  // checks on those and on the steps after a skipped one or a growth of the scale: the
  // models' module inputs, layer inputs and outputs reach step_sink_ during this step's
  // forward (training thread only).
  const bool sampled = wants_gradients(step);
  // Readiness on the first range sample and every Nth after it (kReadinessEveryOption).
  const int64_t readiness_every = options_.capture.readiness_every;
  const bool readiness = sampled && readiness_every > 0 && range_samples_begun_ % readiness_every == 0;
  if (sampled) ++range_samples_begun_;
  step_sink_.phases = {};
  step_sink_.activations = sampled ? &activations_ : nullptr;
  step_sink_.readiness = readiness ? &readiness_ : nullptr;
  const bool checked = (sampled || check_next_step_) && !sample_failure_.stopped();
  step_sink_.backward = checked ? &backward_checks_recorder_ : nullptr;
  if (step_sink_.backward) backward_checks_recorder_.watch_parameters();
  if (step_sink_.activations || step_sink_.backward) engine::activation_sink() = &step_sink_;
  if (!step_is_sampled(step)) return;
  // Over half full: the stride widens (this step shed); nearly empty for a while: it narrows.
  const OpSamplingRule::Limits limits{std::max<size_t>(options_.queue_capacity / 2, 1), options_.queue_capacity / 8,
                                      options_.op_backlog_limit, options_.op_backlog_limit / 8};
  switch (op_rule_.adjust(step, recording_backlog(), limits)) {
    case OpSamplingRule::Change::kWidened:
      pause_gpu_tracing();  // this step's kernels would have no ops to join
      return publish_rule_change();
    case OpSamplingRule::Change::kNarrowed:
      publish_rule_change();
      break;
    case OpSamplingRule::Change::kNone:
      break;
  }
  observer_.begin_step(step);
  resume_gpu_tracing();
}

// --- issue 32: per-op records are shed only by the recorded rule ---------------------
OpSamplingRule::Backlog Profiler::recording_backlog() {
  OpSamplingRule::Backlog waiting;
  {
    std::lock_guard lock(queue_mutex_);
    waiting = {op_batches_waiting_, op_records_waiting_};
  }
  if (writer_) {
    const SessionWriter::Waiting writer = writer_->waiting();
    // The writer's queue in the worker's units: as full as the worker's would be.
    waiting.batches = std::max<uint64_t>(
        waiting.batches, writer.batches * options_.queue_capacity / std::max<size_t>(writer_->capacity(), 1));
    waiting.ops += writer.ops;
  }
  return waiting;
}

void Profiler::publish_rule_change() {
  {
    std::lock_guard lock(queue_mutex_);
    op_fallbacks_ = op_rule_.fallbacks();
  }
  if (writer_) writer_->set_meta_value(meta_key::kOpSamplingFallbacks, op_rule_.encode());
}
// --- end issue 32 ---------------------------------------------------------------------

void Profiler::resume_gpu_tracing() {
  if (!gpu_source_ || !gpu_tracing_paused_) return;
  gpu_source_->resume();
  gpu_tracing_paused_ = false;
}

void Profiler::pause_gpu_tracing() {
  if (!gpu_source_ || gpu_tracing_paused_) return;
  gpu_source_->pause();
  gpu_tracing_paused_ = true;
}

bool Profiler::wants_gradients(int64_t step) { return !sample_failure_.stopped() && sample_spacing_.selects(step); }

void Profiler::on_unscaled_gradients(int64_t step, const engine::NamedTensors& parameters, double loss_scale) {
  // The profiler must not record itself: the engine calls this after the step's
  // timed work (device idle); its ops stay out of the op table, and its kernels, traced
  // when the step is, come back marked as the profiler's: out of the user's tables,
  // counted and named as its own (what a sample costs on the GPU, and where).
  OwnWork own(gpu_source_.get());
  {
    PhaseTimer timer(step_sink_.phases.gradients_ms);
    if (!sample_part("gradient statistics",
                     [&] { enqueue(GradientsJob{gradient_range_stats(step, parameters, loss_scale)}); }))
      return;
  }
  // The layers' weights and gradients, with the inputs the forward left waiting:
  // the readiness pass of this step, read back at its end.
  if (!wants_readiness()) return;
  PhaseTimer timer(step_sink_.phases.readiness_ms);
  sample_part("readiness pass", [&] { readiness_.measure_gradients(parameters); });
}

void Profiler::note_weight_in_by_out(const at::Tensor& weight) {
  if (std::this_thread::get_id() != step_thread_) return;  // the recorder is the training thread's alone
  readiness_.note_in_by_out(weight);
}

void Profiler::note_gemm_weight(std::string layer, const at::Tensor& weight) {
  if (std::this_thread::get_id() != step_thread_) return;  // the recorder is the training thread's alone
  readiness_.note_gemm_weight(std::move(layer), weight);
}

void Profiler::on_layer_input(std::string_view layer, const at::Tensor& input, const at::Tensor& weight) {
  if (std::this_thread::get_id() != step_thread_) return;  // the recorder is the training thread's alone
  if (step_sink_.readiness == nullptr) return;
  PhaseTimer timer(step_sink_.phases.readiness_ms);
  sample_part("readiness pass", [&] { readiness_.on_layer_input(layer, input, weight); });
}

void Profiler::on_module_output(std::string_view module, const at::Tensor& output) {
  if (std::this_thread::get_id() != step_thread_ || step_sink_.activations == nullptr) return;
  PhaseTimer timer(step_sink_.phases.activations_ms);
  sample_part("activation ranges", [&] { step_sink_.activations->on_module_output(std::string(module), output); });
}

void Profiler::on_step_end(const engine::StepEvent& step, const StepDeviceValues& device_values,
                           std::vector<OptimizerStepRecord> optimizer_rows) {
  const int64_t entered = steady_clock_ns();
  // The profiler's work after the timed step (the engine's gradient observers, then
  // this): some of a sample's passes and read-backs, the ops' hand-off.
  const int64_t after_from =
      step.observers_from_ns > 0 && step.observers_from_ns <= entered ? step.observers_from_ns : entered;
  if (engine::activation_sink() == &step_sink_) {
    engine::activation_sink() = nullptr;
    if (step_sink_.backward) {
      // One transfer of the step's gradient tests, after its work (own work).
      sample_part("backward check", [&] {
        if (auto check = backward_checks_recorder_.take(step.step, step.skipped))
          enqueue(BackwardCheckJob{std::move(*check)}, /*may_drop=*/false);
      });
    }
  }
  if (!activations_.empty() || !readiness_.empty()) {
    // The transfers of the activation statistics and the readiness sums are the
    // profiler's own work: not the user's ops or kernels (the step's work is done).
    OwnWork own(gpu_source_.get());
    if (!activations_.empty()) {
      PhaseTimer timer(step_sink_.phases.activations_ms);
      sample_part("activation ranges", [&] { enqueue(ActivationsJob{activations_.take(step.step)}); });
    }
    if (!readiness_.empty()) {
      PhaseTimer timer(step_sink_.phases.readiness_ms);
      sample_part("readiness pass", [&] { enqueue(ReadinessJob{readiness_.take(step.step)}); });
    }
  }
  // A part that failed in the models' sink during the forward (StepModuleSink) only turned
  // the sinks off: what the recorders gathered is released here.
  if (sample_failure_.stopped()) on_sample_stopped();
  const bool sampled = wants_gradients(step.step);  // decided at the step's start
  if (sampled) {
    // Where this sample's time went, added to the run's (said by `summary`).
    step_sink_.phases.samples = 1;
    sample_phases_.add(step_sink_.phases);
    if (writer_) writer_->set_meta_value(meta_key::kRangeSamplePhases, sample_phases_.encode());
  }
  step_sink_.phases = {};
  // A run of skips is caught from its second step; an overflow that follows a growth of
  // the scale (GradScaler probing a larger one) at its first.
  check_next_step_ = step.skipped || step.loss_scale_after > step.loss_scale;
  if (observer_.recording()) {
    observer_.end_step();
    hand_over_ops(step.step);  // admitted at the step's start
    // Tracing can stop until the next sampled step once the step's kernels are done.
    // The engine's step ends with a device sync; a Python loop's need not (its values
    // are read later), so its last traced step waits here, once per traced stretch.
    if (!step_is_sampled(step.step + 1)) {
      if (!device_values.empty() && gpu_source_ && !gpu_tracing_paused_ &&
          device_values.device().type() != c10::DeviceType::CPU)
        at::accelerator::synchronizeDevice(device_values.device().index());
      pause_gpu_tracing();
    }
    // CUPTI hands buffers over when full, so flush now and then for a live view,
    // without waiting for them to be processed.
    if (gpu_source_ && ++profiled_steps_since_flush_ >= 10) {
      gpu_source_->request_flush();
      profiled_steps_since_flush_ = 0;
    }
  }
  const int64_t now = steady_clock_ns();
  // The engine times its own work; the profiler's after it held the training thread as
  // long (on a CPU MLP a sample's passes, some 8 ms over a 7.8 ms step, ran there
  // unseen: "a sample adds -0.12 steps"), so the session keeps it beside the step's time.
  StepRecord record = to_step_record(step, now);
  record.capture_after_ms = static_cast<double>(now - after_from) / 1e6;
  const double step_ms = record.cost_ms();
  {
    // Stacking the values and their copy to the host: the profiler's own GPU work.
    OwnWork own(device_values.empty() ? nullptr : gpu_source_.get());
    if (optimizer_rows.empty()) optimizer_rows = to_optimizer_step_records(step);
    step_values_.hold(std::move(record), std::move(optimizer_rows), device_values);
  }
  hand_over_steps(/*wait=*/false);
  // The spacing of range samples follows what this step cost (it decided at its start).
  if (sample_spacing_.on_step_end(step.step, step_ms, sampled)) {
    if (writer_) writer_->set_meta_value(meta_key::kRangeSampleSpacing, sample_spacing_.encode());
    hand_over_range_sampling();
  }
}

void Profiler::hand_over_range_sampling() {
  const CaptureSettings& c = options_.capture;
  enqueue(RangeSamplingJob{RangeSampleSpacing::describe_sampling(c.gradient_every, c.sample_budget_percent,
                                                                 sample_spacing_.changes(), c.readiness_every,
                                                                 sample_spacing_.early_last_step())},
          /*may_drop=*/false);
}

void Profiler::hand_over_ops(int64_t step) {
  OpBatch batch = observer_.take();
  if (const uint64_t over = batch.over_budget(); over > 0) {
    if (ops_over_budget_.fetch_add(over, std::memory_order_relaxed) == 0)
      first_step_over_budget_.store(step, std::memory_order_relaxed);
    if (writer_) {
      writer_->set_meta_value(meta_key::kOpsOverStepBudget, std::to_string(ops_over_budget_.load()));
      writer_->set_meta_value(meta_key::kFirstStepOverBudget, std::to_string(first_step_over_budget_.load()));
    }
  }
  enqueue(OpsJob{std::move(batch)}, /*may_drop=*/false);
}

void Profiler::hand_over_steps(bool wait) {
  DeferredStepValues::Ready ready = step_values_.take_ready(wait);
  for (StepRecord& step : ready.steps) enqueue(StepJob{std::move(step)}, /*may_drop=*/false);
  if (!ready.optimizer_steps.empty()) append_optimizer_steps(std::move(ready.optimizer_steps));
  if (!ready.scheduler_steps.empty()) append_scheduler_steps(std::move(ready.scheduler_steps));
}

void Profiler::drop_interrupted_step() {
  observer_.end_step();
  const OpBatch batch = observer_.take();
  interrupted_first_op_id_.store(observer_.first_op_id_of_step(), std::memory_order_relaxed);
  interrupted_ops_.store(batch.size() + batch.over_budget(), std::memory_order_relaxed);
  interrupted_step_.store(observer_.step_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void Profiler::set_aside_interrupted_kernels(std::vector<KernelRecord>& kernels) {
  const uint64_t first = interrupted_first_op_id_.load(std::memory_order_relaxed);
  if (first == UINT64_MAX) return;
  const size_t before = kernels.size();
  std::erase_if(kernels, [&](const KernelRecord& k) { return k.op_id >= first; });
  interrupted_kernels_.fetch_add(before - kernels.size(), std::memory_order_relaxed);
}

void Profiler::finish_recording() {
  if (observer_.recording()) {
    observer_.end_step();
    hand_over_ops(observer_.step_.load(std::memory_order_relaxed));
  }
  hand_over_steps(/*wait=*/true);  // the last steps' values, read before the tables close
  if (gpu_source_) gpu_source_->stop();  // delivers the rest and releases CUPTI
  enqueue(FinishJob{}, /*may_drop=*/false);
}

void Profiler::on_run_end(engine::RunState final_state, const std::string& message) {
  if (engine::activation_sink() == &step_sink_) engine::activation_sink() = nullptr;  // a step that failed
  readiness_.discard();
  activations_.discard();  // a step that failed: its held outputs are released
  backward_checks_recorder_.discard();  // and its parameters' hooks removed
  // A stop must end the run within a second: the stopped step's ops could be
  // millions (a huge accumulation) and take tens of seconds to store. A failed
  // step keeps its ops: they show where it failed.
  if (final_state == engine::RunState::kStopped && observer_.recording()) drop_interrupted_step();
  finish_recording();
  // The worker publishes the final snapshot after everything queued so far.
  enqueue(PublishJob{}, /*may_drop=*/false);
  {
    std::unique_lock lock(queue_mutex_);
    queue_drained_.wait(lock, [&] { return queue_.empty() && !busy_; });
  }
  if (writer_) {
    // The worker saved the op and kernel tables at FinishJob.
    writer_->set_meta_value(meta_key::kFinalState, std::string(engine::to_string(final_state)));
    if (!message.empty()) writer_->set_meta_value(meta_key::kFinalMessage, message);
    writer_->set_meta_value(meta_key::kGpuTracing, gpu_tracing_);
    writer_->set_meta_value(meta_key::kProfilerDroppedBatches, std::to_string(dropped_.load()));
    writer_->set_meta_value(meta_key::kRecordedOps, std::to_string(observer_.recorded_ops()));
    if (const int64_t step = interrupted_step_.load(); step != 0) {
      writer_->set_meta_value(meta_key::kInterruptedStep, std::to_string(step));
      writer_->set_meta_value(meta_key::kInterruptedStepOps, std::to_string(interrupted_ops_.load()));
      writer_->set_meta_value(meta_key::kInterruptedStepKernels, std::to_string(interrupted_kernels_.load()));
    }
    if (gpu_source_) {
      const auto stats = gpu_source_->stats();
      writer_->set_meta_value(meta_key::kCuptiDroppedRecords, std::to_string(stats.dropped_by_cupti));
      writer_->set_meta_value(meta_key::kCuptiUnmappedRecords, std::to_string(stats.unmapped));
    }
    writer_->close();
  }
}

void Profiler::on_kernels(std::vector<KernelRecord>&& batch) { enqueue(KernelsJob{std::move(batch)}); }

void Profiler::enqueue(Job job, bool may_drop) {
  {
    std::lock_guard lock(queue_mutex_);
    // Steps waiting (never dropped) do not crowd out record batches: only these count.
    const bool record_batch = is_record_batch(job);
    if (may_drop && records_waiting_ >= options_.queue_capacity) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    records_waiting_ += record_batch;
    if (const auto* ops = std::get_if<OpsJob>(&job)) {
      ++op_batches_waiting_;
      op_records_waiting_ += ops->ops.size();
    }
    queue_.push_back(std::move(job));
  }
  queue_changed_.notify_one();
}

void Profiler::worker_loop() {
  std::unique_lock lock(queue_mutex_);
  const auto has_job = [&] { return stopping_ || !queue_.empty(); };
  // The worker's work runs off the queue's lock but marked busy: a drain waits for it
  // too (the work writes to the session).
  const auto while_busy = [&](auto&& work) {
    busy_ = true;
    lock.unlock();
    work();
    lock.lock();
    busy_ = false;
    if (queue_.empty()) queue_drained_.notify_all();
  };
  while (true) {
    // What was processed goes out on time even when no job follows it: a paused run
    // (or a loop between steps) would otherwise show the op table as it was up to
    // 100 ms before the pause (empty, when the first steps were that fast), and keep
    // on disk the tables of up to 2 s before it, for as long as the pause lasts.
    if (const auto due = next_flush_due()) {
      if (!queue_changed_.wait_until(lock, *due, has_job)) {
        while_busy([&] { flush_due(std::chrono::steady_clock::now()); });
        continue;
      }
    } else {
      queue_changed_.wait(lock, has_job);
    }
    if (queue_.empty() && stopping_) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    records_waiting_ -= is_record_batch(job);
    if (const auto* ops = std::get_if<OpsJob>(&job)) {
      --op_batches_waiting_;
      op_records_waiting_ -= ops->ops.size();
    }
    while_busy([&] {
      snapshot_dirty_ = true;  // before process(): a PublishJob publishes it
      process(job);
      flush_due(std::chrono::steady_clock::now());
    });
  }
}

std::optional<std::chrono::steady_clock::time_point> Profiler::next_flush_due() const {
  std::optional<std::chrono::steady_clock::time_point> due;
  if (snapshot_dirty_) due = last_publish_ + kPublishInterval;
  if (tables_dirty_) {
    const auto save = last_table_save_ + options_.table_save_interval;
    due = due ? std::min(*due, save) : save;
  }
  return due;
}

void Profiler::flush_due(std::chrono::steady_clock::time_point now) {
  if (snapshot_dirty_ && now - last_publish_ >= kPublishInterval) publish_snapshot();
  if (tables_dirty_ && now - last_table_save_ >= options_.table_save_interval) save_tables();
}

void Profiler::process(Job& job) {
  if (auto* ops = std::get_if<OpsJob>(&job)) {
    std::vector<OpRecord> records = std::move(ops->ops).to_records();
    aggregator_.add_ops(records);
    compiled_kernel_times_.add_ops(records);
    for (const OpRecord& op : records) last_ops_step_ = std::max(last_ops_step_, op.step);
    if (writer_) writer_->append_ops(std::move(records));
    take_settled_kernels();  // kernels that came before these ops
    tables_dirty_ = true;
  } else if (auto* kernels = std::get_if<KernelsJob>(&job)) {
    set_aside_own_kernels(kernels->kernels);
    set_aside_interrupted_kernels(kernels->kernels);
    aggregator_.add_kernels(std::move(kernels->kernels));
    take_settled_kernels();
    tables_dirty_ = true;
  } else if (auto* gradients = std::get_if<GradientsJob>(&job)) {
    latest_gradients_ = gradients->samples;
    for (const auto& s : gradients->samples) gradient_history_.push_back(s);
    // Keep whole steps: drop the oldest step's samples while over budget.
    const size_t per_step = std::max<size_t>(gradients->samples.size(), 1);
    while (gradient_history_.size() > kGradientHistorySteps * per_step) gradient_history_.pop_front();
    if (writer_) writer_->append_gradients(std::move(gradients->samples));
  } else if (auto* activations = std::get_if<ActivationsJob>(&job)) {
    latest_activations_ = activations->samples;
    if (!first_fp16_overflow_)
      if (const ActivationSample* first = first_fp16_overflow(activations->samples)) first_fp16_overflow_ = *first;
    if (writer_) writer_->append_activations(std::move(activations->samples));
  } else if (auto* readiness = std::get_if<ReadinessJob>(&job)) {
    for (const ReadinessSample& sample : readiness->samples) readiness_totals_.add(sample);
    if (writer_) writer_->append_readiness(std::move(readiness->samples));
  } else if (auto* checked = std::get_if<BackwardCheckJob>(&job)) {
    backward_checks_.push_back(checked->check);
    if (writer_) writer_->append_backward_checks({std::move(checked->check)});
  } else if (auto* step = std::get_if<StepJob>(&job)) {
    last_step_ = step->step.step;
    skipped_steps_ += step->step.skipped ? 1 : 0;
    // A step's ops are queued before its StepRecord: a completed step with ops is a
    // profiled step. Ops after the last completed step (a stop mid-step, a Python
    // loop's GradScaler.update() after its last optimizer step) are in the table but
    // make no step of their own.
    if (last_ops_step_ == last_step_) {
      ++profiled_steps_;
      warmup_step_profiled_ = warmup_step_profiled_ || last_step_ == kWarmupStep;
      tables_dirty_ = true;  // saved with the op table: the two must agree on disk
    }
    if (writer_) writer_->append_step(step->step);
  } else if (auto* sampling = std::get_if<RangeSamplingJob>(&job)) {
    range_sampling_ = std::move(sampling->text);
  } else if (std::holds_alternative<PublishJob>(job)) {
    publish_snapshot();
  } else if (std::holds_alternative<FinishJob>(job)) {
    if (const uint64_t first = interrupted_first_op_id_.load(std::memory_order_relaxed); first != UINT64_MAX)
      interrupted_kernels_.fetch_add(aggregator_.discard_parked_from(first), std::memory_order_relaxed);
    aggregator_.release_parked();
    take_settled_kernels();
    save_tables();
  }
}

void Profiler::set_aside_own_kernels(std::vector<KernelRecord>& kernels) {
  std::erase_if(kernels, [&](const KernelRecord& k) {
    if (k.op_id != cupti::kProfilerOwnWork) return false;
    ++own_kernels_;
    own_gpu_ns_ += k.end_ns - k.start_ns;
    auto& [calls, ns] = own_by_name_[k.name];
    ++calls;
    ns += k.end_ns - k.start_ns;
    return true;
  });
}

void Profiler::take_settled_kernels() {
  std::vector<OpAggregator::SettledKernel> settled = aggregator_.take_settled();
  if (settled.empty()) return;
  std::vector<KernelRecord> records;
  records.reserve(settled.size());
  std::vector<const KernelRecord*> launched;
  launched.reserve(settled.size());
  for (const auto& k : settled) {
    all_kernels_table_.add(k.record, k.op_name, k.enclosing_ops);
    if (!k.apart)
      kernel_table_.add(k.record, k.op_name, k.enclosing_ops);
    else if (k.op_name.empty())
      warmup_unattributed_ns_ += k.record.end_ns - k.record.start_ns;
    launched.push_back(&k.record);
  }
  compiled_kernel_times_.add_kernels(launched);  // inside compiled graphs, on the GPU
  for (auto& k : settled) records.push_back(std::move(k.record));
  if (writer_) writer_->append_kernels(std::move(records));
}

void Profiler::save_tables() {
  last_table_save_ = std::chrono::steady_clock::now();
  tables_dirty_ = false;
  if (!writer_) return;
  OpTable table = annotated_op_stats();
  writer_->replace_op_stats(std::move(table.rows));
  std::shared_ptr<const std::vector<CompiledKernelRow>> listed;
  {
    std::lock_guard lock(compiled_mutex_);
    listed = compiled_kernels_;
  }
  // Over the op table's steps, whose compiled regions' time the category ledger moves by them.
  if ((listed && !listed->empty()) || !compiled_kernel_times_.empty())
    writer_->replace_compiled_kernels(join_compiled_kernels(listed ? *listed : std::vector<CompiledKernelRow>{},
                                                            compiled_kernel_times_,
                                                            table.warmup_left_out.has_value()));
  // With the table it describes, so a killed run's stale table and its count agree.
  if (table.warmup_left_out || warmup_meta_written_) {  // before the count, which readers wait on
    writer_->set_meta_value(meta_key::kWarmupLeftOut,
                            table.warmup_left_out ? warmup_meta_value(*table.warmup_left_out) : std::string());
    warmup_meta_written_ = true;
  }
  writer_->set_meta_value(meta_key::kProfiledSteps, std::to_string(table_steps(table)));
  const KernelAggregator& kernels = kernel_table(table);
  writer_->replace_kernel_stats(kernels.summaries(), kernels.launchers(), kernels.enclosing());
  writer_->set_meta_value(meta_key::kUnattributedKernels, std::to_string(aggregator_.unattributed_kernels()));
  writer_->set_meta_value(meta_key::kKernelsParked, std::to_string(aggregator_.kernels_parked_total()));
  writer_->set_meta_value(meta_key::kKernelsGivenUp, std::to_string(aggregator_.kernels_given_up()));
  writer_->set_meta_value(meta_key::kProfilerOwnKernels, std::to_string(own_kernels_));
  writer_->set_meta_value(meta_key::kProfilerOwnGpuNs, std::to_string(own_gpu_ns_));
  if (!own_by_name_.empty()) {
    std::vector<OwnKernelCost> own;
    own.reserve(own_by_name_.size());
    for (const auto& [name, cost] : own_by_name_) own.push_back({name, cost.first, cost.second});
    writer_->set_meta_value(meta_key::kProfilerOwnKernelNames, own_kernels_json(std::move(own), kOwnKernelsKept));
  }
}

int64_t Profiler::table_steps(const OpTable& table) const {
  // Ops after the last completed step (a stop mid-step) make a table of one step at least.
  const int64_t profiled = std::max<int64_t>(profiled_steps_, last_ops_step_ > kNoStep ? 1 : 0);
  return profiled - (table.warmup_left_out ? 1 : 0);
}

const KernelAggregator& Profiler::kernel_table(const OpTable& table) const {
  return table.warmup_left_out ? kernel_table_ : all_kernels_table_;
}

GpuAttribution Profiler::gpu_attribution(const OpTable& table) const {
  const int64_t unattributed = aggregator_.unattributed_gpu_ns();
  return {table.warmup_left_out ? unattributed - warmup_unattributed_ns_ : unattributed,
          kernel_table(table).total_gpu_ns()};
}

OpTable Profiler::annotated_op_stats() const {
  OpTable table = op_table_without_warmup(aggregator_.op_stats(), aggregator_.warmup_op_stats(),
                                          profiled_steps_ > (warmup_step_profiled_ ? 1 : 0));
  if (table.warmup_left_out) {  // and its kernels from the kernel table
    WarmupLeftOut& left_out = *table.warmup_left_out;
    left_out.kernels_left_out = true;
    left_out.kernels = all_kernels_table_.calls() - kernel_table_.calls();
    left_out.kernel_gpu_ns = all_kernels_table_.total_gpu_ns() - kernel_table_.total_gpu_ns();
    left_out.unattributed_gpu_ns = warmup_unattributed_ns_;
    left_out.longest_kernel_ns = all_kernels_table_.longest_ns();
  }
  std::vector<OpStats>& rows = table.rows;
  std::shared_ptr<const std::vector<CompiledOpSignature>> signatures;
  std::vector<int64_t> graph_calls;
  {
    std::lock_guard lock(compiled_mutex_);
    signatures = compiled_op_signatures_;
    graph_calls = compiled_graph_calls_;
    if (table.warmup_left_out)  // the graphs' node rows count the calls of the table's steps
      for (size_t i = 0; i < graph_calls.size() && i < compiled_warmup_graph_calls_.size(); ++i)
        graph_calls[i] = std::max<int64_t>(graph_calls[i] - compiled_warmup_graph_calls_[i], 0);
  }
  if (signatures) {
    std::vector<OpStats> compiled = compiled_op_rows(*signatures, graph_calls);
    rows.insert(rows.end(), std::make_move_iterator(compiled.begin()), std::make_move_iterator(compiled.end()));
  }
  for (OpStats& row : rows) {
    // A demoted op computes in its output's dtype: autocast cast its floating inputs to it.
    std::vector<DtypeName> compute_dtypes = row.input_dtypes;
    if (row.category == OpCategory::kDemoted && !row.output_dtypes.empty())
      for (auto& d : compute_dtypes)
        if (is_floating_dtype(d)) d = row.output_dtypes.front();
    const auto verdict = assess(row.name, compute_dtypes, row.input_shapes, tf32_);
    row.tensor_core_eligible = verdict.eligible;
    // A row missed Tensor Cores when none of its kernels used them (a split-K
    // reduction or a cast beside a Tensor Core GEMM is no miss); untraced rows keep
    // the reason as a hint for a GPU run.
    const bool missed = row.tensor_core_kernels == 0;
    row.tensor_core_note = verdict.eligible && missed ? verdict.reason : std::string();
  }
  return table;
}

void Profiler::publish_snapshot() {
  auto next = std::make_shared<ProfileSnapshot>();
  next->step = last_step_;
  OpTable table = annotated_op_stats();
  next->op_stats = std::move(table.rows);
  next->warmup_left_out = table.warmup_left_out;
  next->profiled_steps = table_steps(table);
  next->top_kernels = kernel_table(table).summaries();
  next->unattributed_kernels = aggregator_.unattributed_kernels();
  next->gpu_attribution = gpu_attribution(table);
  next->latest_gradients = latest_gradients_;
  next->gradient_history.assign(gradient_history_.begin(), gradient_history_.end());
  next->latest_activations = latest_activations_;
  next->first_fp16_overflow = first_fp16_overflow_;
  next->readiness = readiness_totals_;
  next->backward_inf = summarize_backward_checks(backward_checks_, skipped_steps_);
  next->range_sampling = range_sampling_;
  next->gpu_tracing = gpu_tracing_;
  next->dropped_records = dropped_.load(std::memory_order_relaxed);
  last_publish_ = std::chrono::steady_clock::now();
  snapshot_dirty_ = false;
  std::lock_guard lock(snapshot_mutex_);
  snapshot_ = std::move(next);
}

}  // namespace ampscope::profiler
