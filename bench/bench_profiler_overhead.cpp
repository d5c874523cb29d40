// What profiling costs a training step: profiling off, the op observer alone,
// and full capture (ops every step, session file, gradient ranges every 10
// steps, CUPTI on CUDA). Device: AMPSCOPE_BENCH_DEVICE=cpu|cuda; sizes:
// AMPSCOPE_BENCH_WIDTH (default 256 on the CPU, 1024 on CUDA).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

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

void step_time(benchmark::State& state, Mode mode, engine::DeviceChoice device, int64_t width) {
  try {
    engine::TrainingRun run(gpt_config(device, width));
    const std::string session = fmt::format("/tmp/ampscope-bench-{}.ampscope", ::getpid());
    profiler::ProfilerOptions options;
    options.session_path = mode == Mode::kFullCapture ? session : "";
    options.gradient_every = mode == Mode::kFullCapture ? 10 : 0;
    options.trace_gpu = mode == Mode::kFullCapture;
    std::unique_ptr<profiler::Profiler> profiler;
    std::vector<engine::TrainingObserver*> observers;
    if (mode != Mode::kOff) {
      profiler = std::make_unique<profiler::Profiler>(options);
      profiler->on_run_start(run.started_event());
      observers.push_back(profiler.get());
    }
    int64_t step = 1;
    for (int i = 0; i < 5; ++i) run.step(step++, observers);
    for (auto _ : state) {
      const engine::StepEvent e = run.step(step++, observers);
      state.SetIterationTime(e.step_time_ms / 1e3);
    }
    if (profiler) profiler->on_run_end(engine::RunState::kFinished, "");
    ::unlink(session.c_str());
  } catch (const engine::EngineError& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* env = std::getenv("AMPSCOPE_BENCH_DEVICE");
  const std::string device_name = env ? env : "cpu";
  const auto device = device_name == "cuda" ? engine::DeviceChoice::kCUDA : engine::DeviceChoice::kCPU;
  const char* width_env = std::getenv("AMPSCOPE_BENCH_WIDTH");
  const int64_t width = width_env ? std::atoll(width_env) : (device_name == "cuda" ? 1024 : 256);
  for (auto [mode, name] : {std::pair{Mode::kOff, "off"}, std::pair{Mode::kObserverOnly, "observer"},
                            std::pair{Mode::kFullCapture, "full"}}) {
    benchmark::RegisterBenchmark(fmt::format("profiling/{}/gpt{}/{}", device_name, width, name).c_str(),
                                 [=](benchmark::State& s) { step_time(s, mode, device, width); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(3.0)
        ->Repetitions(3)
        ->ReportAggregatesOnly(true);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
