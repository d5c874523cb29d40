// What profiling costs a training step: profiling off, the op observer alone,
// and full capture (ops every step, session file, gradient ranges every 10
// steps, CUPTI on CUDA). Device: AMPSCOPE_BENCH_DEVICE=cpu|cuda; sizes:
// AMPSCOPE_BENCH_WIDTH (default 256 on the CPU, 1024 on CUDA).
//
// .../observer-alternate, .../full-alternate: the profiler records every second
// step only, and recorded steps are compared with the unrecorded steps between
// them (counter recorded_vs_unrecorded): one run, the same moment, so a machine
// shared with other work moves both alike. The worker's processing of a recorded
// step overlaps the next (unrecorded) step, so this is a slight underestimate.
//
// profiling/.../per_op: what one recorded op costs the training thread, on a
// GPT too small for its kernels to matter, in thread CPU time (other processes
// on the machine barely move it): steps without a callback, with one that does
// nothing but ask for inputs and outputs (recordfunction_ns_per_op: PyTorch's
// share) and with the observer alternate, so all see the same conditions;
// to_records_ns_per_op is what the profiler's worker then spends per op.
// Run it with OMP_NUM_THREADS=1.
//
// profiling/cpu/tiny-ops/per_op: the same question with nothing but tiny ATen
// ops (element-wise on 4-element tensors, no autograd), in blocks, the modes
// taking turns: no callback, PyTorch's floor (a callback that wants inputs and
// outputs) and ampscope's op observer. *_ns_per_op is the training thread's CPU
// time per op above `off`; ampscope_finish_ns_per_op what making the records
// costs afterwards (on the profiler's worker in a run). The peer,
// torch.profiler.profile(record_shapes=True), is measured the same way by
// bench/torch_profiler_tiny_ops.py (LibTorch's kineto started from this binary
// hung in prepareProfiler on the CPU-only machine, so it is not here).
//
// profiling/cpu/mlpLx32/gradient_sample: what one gradient sample (activation
// ranges inside the step, gradient ranges after it) adds to the launch-bound
// CPU MLP of issue #27 (L layers of width 32, batch 16, bf16): sampled and
// plain steps alternate; the training thread's CPU time of the whole
// TrainingRun::step call (the statistics run in it, after the timed part), as
// wall time on a loaded 2-core machine is mostly other processes' time slices;
// sample_over_step is the sampled steps' median minus the plain ones', over the
// plain ones'.
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "engine/errors.h"
#include "engine/training_run.h"
#include "profiler/capture/op_observer.h"
#include "profiler/capture/profiler.h"

namespace {

using namespace ampscope;

enum class Mode { kOff, kObserverOnly, kFullCapture };

int64_t thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

engine::TrainConfig gpt_config(engine::DeviceChoice device, int64_t width) {
  engine::TrainConfig c;
  c.model.kind = engine::ModelKind::kGPT;
  c.model.layers = device == engine::DeviceChoice::kCUDA ? 12 : 2;
  c.model.width = width;
  c.model.heads = width / 64;
  c.model.seq_len = device == engine::DeviceChoice::kCUDA ? 1024 : 64;
  c.data.vocab_size = 64;
  c.batch_size = device == engine::DeviceChoice::kCUDA ? 16 : 8;
  c.precision = engine::Precision::kBF16;
  c.device = device;
  c.steps = 1'000'000;
  return c;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

void step_time(benchmark::State& state, Mode mode, engine::DeviceChoice device, int64_t width, bool alternate) {
  try {
    engine::TrainingRun run(gpt_config(device, width));
    const std::string session = fmt::format("/tmp/ampscope-bench-{}.ampscope", ::getpid());
    profiler::ProfilerOptions options;
    options.session_path = mode == Mode::kFullCapture ? session : "";
    options.capture.gradient_every = mode == Mode::kFullCapture ? 10 : 0;
    options.capture.trace_gpu = mode == Mode::kFullCapture;
    if (alternate) {
      options.capture.window_start = 2;  // even steps, so the gradient steps (every 10) are recorded ones
      options.capture.every_n_steps = 2;
    }
    std::unique_ptr<profiler::Profiler> profiler;
    std::vector<engine::TrainingObserver*> observers;
    if (mode != Mode::kOff) {
      profiler = std::make_unique<profiler::Profiler>(options);
      profiler->on_run_start(run.started_event());
      observers.push_back(profiler.get());
    }
    int64_t step = 1;
    for (int i = 0; i < 6; ++i) run.step(step++, observers);
    int64_t thread_ns = 0;
    std::vector<double> recorded_ms, unrecorded_ms;
    for (auto _ : state) {
      const bool recorded = profiler && profiler->step_is_sampled(step);
      const int64_t t0 = thread_cpu_ns();
      const engine::StepEvent e = run.step(step++, observers);
      thread_ns += thread_cpu_ns() - t0;
      state.SetIterationTime(e.step_time_ms / 1e3);
      (recorded ? recorded_ms : unrecorded_ms).push_back(e.step_time_ms);
    }
    // The training thread's own CPU time: less sensitive to other load than the step's wall time.
    state.counters["train_thread_cpu_ms"] =
        benchmark::Counter(static_cast<double>(thread_ns) / 1e6 / static_cast<double>(state.iterations()));
    if (alternate) {
      state.counters["recorded_ms"] = benchmark::Counter(median(recorded_ms));
      state.counters["unrecorded_ms"] = benchmark::Counter(median(unrecorded_ms));
      state.counters["recorded_vs_unrecorded"] = benchmark::Counter(median(recorded_ms) / median(unrecorded_ms));
    }
    if (profiler) profiler->on_run_end(engine::RunState::kFinished, "");
    ::unlink(session.c_str());
  } catch (const engine::EngineError& e) {
    state.SkipWithError(e.what());
  }
}

// The training thread's share of the observer: callbacks, then handing the step's ops on.
template <typename Observer>
auto take_ops(Observer& observer) {
  if constexpr (requires { observer.take(); }) {
    return observer.take();
  } else {
    return observer.collect();  // builds of the observer that made OpRecords in the callbacks
  }
}

template <typename Batch>
size_t to_records(Batch&& batch) {
  if constexpr (requires { std::move(batch).to_records(); }) {
    return std::move(batch).to_records().size();
  } else {
    return batch.size();
  }
}

// What RecordFunction itself costs with a callback that wants inputs and outputs
// (PyTorch boxes them for it): the floor under any op observer.
std::unique_ptr<at::ObserverContext> ignore_enter(const at::RecordFunction&) { return nullptr; }
void ignore_exit(const at::RecordFunction&, at::ObserverContext*) {}

engine::TrainConfig tiny_gpt_config() {
  engine::TrainConfig config = gpt_config(engine::DeviceChoice::kCPU, 64);
  config.model.seq_len = 8;
  config.batch_size = 2;
  return config;
}

// Issue #27's launch-bound MLP: 64 layers of width 32, batch 16, bf16 autocast
// (about 8,000 ops a step, casts and backward nodes among them).
engine::TrainConfig launch_bound_mlp_config(int64_t layers) {
  engine::TrainConfig config;
  config.model.kind = engine::ModelKind::kMLP;
  config.model.layers = layers;
  config.model.width = 32;
  config.batch_size = 16;
  config.precision = engine::Precision::kBF16;
  config.device = engine::DeviceChoice::kCPU;
  config.steps = 1'000'000;
  return config;
}

void per_op_cost(benchmark::State& state, const engine::TrainConfig& config) {
  engine::TrainingRun run(config);
  profiler::OpObserver observer;
  int64_t step = 1;
  for (int i = 0; i < 5; ++i) run.step(step++);
  int64_t off_ns = 0, on_ns = 0, convert_ns = 0, floor_ns = 0;
  uint64_t ops = 0;
  for (auto _ : state) {
    const uint64_t handle = at::addGlobalCallback(
        at::RecordFunctionCallback(ignore_enter, ignore_exit).needsInputs(true).needsOutputs(true).scopes(
            {at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION, at::RecordScope::USER_SCOPE}));
    const int64_t f0 = thread_cpu_ns();
    run.step(step++);
    floor_ns += thread_cpu_ns() - f0;
    at::removeCallback(handle);
    const int64_t t0 = thread_cpu_ns();
    run.step(step++);
    const int64_t t1 = thread_cpu_ns();
    observer.begin_step(step);
    run.step(step++);
    observer.end_step();
    auto batch = take_ops(observer);
    const int64_t t2 = thread_cpu_ns();
    ops += to_records(std::move(batch));
    const int64_t t3 = thread_cpu_ns();
    off_ns += t1 - t0;
    on_ns += t2 - t1;
    convert_ns += t3 - t2;
    state.SetIterationTime(static_cast<double>(t2 - t1) / 1e9);
  }
  const auto n = static_cast<double>(state.iterations());
  state.counters["ops_per_step"] = benchmark::Counter(static_cast<double>(ops) / n);
  state.counters["off_step_us"] = benchmark::Counter(static_cast<double>(off_ns) / 1e3 / n);
  state.counters["on_step_us"] = benchmark::Counter(static_cast<double>(on_ns) / 1e3 / n);
  // Per recorded op: on the training thread, and making OpRecords (the profiler's worker).
  const auto per_op = [&](int64_t ns) {
    return benchmark::Counter(static_cast<double>(ns) / static_cast<double>(ops));
  };
  state.counters["train_ns_per_op"] = per_op(on_ns - off_ns);
  state.counters["to_records_ns_per_op"] = per_op(convert_ns);
  state.counters["recordfunction_ns_per_op"] = per_op(floor_ns - off_ns);
}

// Tiny element-wise ops: what a launch-bound step is made of, without the kernels.
uint64_t run_tiny_ops(int64_t rounds, const at::Tensor& a, const at::Tensor& b) {
  at::Tensor c = a;
  for (int64_t i = 0; i < rounds; ++i) {
    c = at::add(c, b);
    c = at::mul(c, a);
    c = at::sub(c, b);
    c = at::relu(c);
  }
  benchmark::DoNotOptimize(c);
  return static_cast<uint64_t>(rounds) * 4;
}

void tiny_op_cost(benchmark::State& state) {
  const at::Tensor a = at::ones({4}), b = at::full({4}, 0.5);
  constexpr int64_t kRounds = 500;  // 2,000 ops a block
  profiler::OpObserver observer;
  run_tiny_ops(kRounds, a, b);  // warm-up
  int64_t off_ns = 0, floor_ns = 0, ours_ns = 0, ours_finish_ns = 0;
  uint64_t ops = 0, recorded = 0;
  int64_t step = 1;
  for (auto _ : state) {
    const int64_t t0 = thread_cpu_ns();
    ops += run_tiny_ops(kRounds, a, b);
    off_ns += thread_cpu_ns() - t0;

    const uint64_t handle = at::addGlobalCallback(
        at::RecordFunctionCallback(ignore_enter, ignore_exit).needsInputs(true).needsOutputs(true).scopes(
            {at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION, at::RecordScope::USER_SCOPE}));
    const int64_t t1 = thread_cpu_ns();
    run_tiny_ops(kRounds, a, b);
    floor_ns += thread_cpu_ns() - t1;
    at::removeCallback(handle);

    observer.begin_step(step++);
    const int64_t t2 = thread_cpu_ns();
    run_tiny_ops(kRounds, a, b);
    const int64_t t3 = thread_cpu_ns();
    observer.end_step();
    recorded += to_records(take_ops(observer));
    ours_ns += t3 - t2;
    ours_finish_ns += thread_cpu_ns() - t3;
    state.SetIterationTime(static_cast<double>(t3 - t2) / 1e9);
  }
  const auto per_op = [&](int64_t ns) { return benchmark::Counter(static_cast<double>(ns) / static_cast<double>(ops)); };
  state.counters["off_ns_per_op"] = per_op(off_ns);
  state.counters["recordfunction_ns_per_op"] = per_op(floor_ns - off_ns);
  state.counters["ampscope_ns_per_op"] = per_op(ours_ns - off_ns);
  state.counters["ampscope_finish_ns_per_op"] = per_op(ours_finish_ns);
  // Every op of a block is recorded: a check that the observer saw them all.
  state.counters["recorded_per_op"] = benchmark::Counter(static_cast<double>(recorded) / static_cast<double>(ops));
}

void gradient_sample_cost(benchmark::State& state, int64_t layers) {
  engine::TrainingRun run(launch_bound_mlp_config(layers));
  profiler::ProfilerOptions options;
  options.capture.window_start = int64_t{1} << 50;  // no op recording: the statistics alone
  options.capture.gradient_every = 2;               // even steps sampled, odd ones plain
  options.capture.trace_gpu = false;
  profiler::Profiler profiler(options);
  profiler.on_run_start(run.started_event());
  const std::vector<engine::TrainingObserver*> observers{&profiler};
  int64_t step = 1;
  for (int i = 0; i < 6; ++i) run.step(step++, observers);
  std::vector<double> sampled_ms, plain_ms;
  for (auto _ : state) {
    const bool sampled = profiler.wants_gradients(step);
    const int64_t t0 = thread_cpu_ns();
    run.step(step++, observers);
    const double ms = static_cast<double>(thread_cpu_ns() - t0) / 1e6;
    state.SetIterationTime(ms / 1e3);
    (sampled ? sampled_ms : plain_ms).push_back(ms);
  }
  const double plain = median(plain_ms), with_sample = median(sampled_ms);
  state.counters["plain_step_ms"] = benchmark::Counter(plain);
  state.counters["sampled_step_ms"] = benchmark::Counter(with_sample);
  state.counters["sample_over_step"] = benchmark::Counter(plain > 0 ? (with_sample - plain) / plain : 0.0);
  profiler.on_run_end(engine::RunState::kFinished, "");
}

}  // namespace

int main(int argc, char** argv) {
  const char* env = std::getenv("AMPSCOPE_BENCH_DEVICE");
  const std::string device_name = env ? env : "cpu";
  const auto device = device_name == "cuda" ? engine::DeviceChoice::kCUDA : engine::DeviceChoice::kCPU;
  const char* width_env = std::getenv("AMPSCOPE_BENCH_WIDTH");
  const int64_t width = width_env ? std::atoll(width_env) : (device_name == "cuda" ? 1024 : 256);
  struct Variant {
    Mode mode;
    bool alternate;
    const char* name;
  };
  for (const Variant v : {Variant{Mode::kOff, false, "off"}, Variant{Mode::kObserverOnly, false, "observer"},
                          Variant{Mode::kFullCapture, false, "full"},
                          Variant{Mode::kObserverOnly, true, "observer-alternate"},
                          Variant{Mode::kFullCapture, true, "full-alternate"}}) {
    benchmark::RegisterBenchmark(fmt::format("profiling/{}/gpt{}/{}", device_name, width, v.name).c_str(),
                                 [=](benchmark::State& s) { step_time(s, v.mode, device, width, v.alternate); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(3.0)
        ->Repetitions(3)
        ->ReportAggregatesOnly(true);
  }
  if (device == engine::DeviceChoice::kCPU) {
    for (const auto& [name, config] : {std::pair{"gpt64-tiny", tiny_gpt_config()},
                                       std::pair{"mlp64x32", launch_bound_mlp_config(64)}})
      benchmark::RegisterBenchmark(fmt::format("profiling/cpu/{}/per_op", name).c_str(),
                                   [config](benchmark::State& s) { per_op_cost(s, config); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(3.0)
          ->Repetitions(3)
          ->ReportAggregatesOnly(true);
    for (const int64_t layers : {4, 64})
      benchmark::RegisterBenchmark(fmt::format("profiling/cpu/mlp{}x32/gradient_sample", layers).c_str(),
                                   [layers](benchmark::State& s) { gradient_sample_cost(s, layers); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(2.0)
          ->Repetitions(3)
          ->ReportAggregatesOnly(true);
    benchmark::RegisterBenchmark("profiling/cpu/tiny-ops/per_op", tiny_op_cost)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(2.0)
        ->Repetitions(3)
        ->ReportAggregatesOnly(true);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
