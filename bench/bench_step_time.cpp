// Training step time per model x precision, through the same TrainingRun the
// CLI and GUI use. Device: AMPSCOPE_BENCH_DEVICE=cpu|cuda (default cpu).
// bench/pytorch_eager_step.py measures the same architectures in Python
// PyTorch eager; scripts/bench.sh runs both in one go for docs/performance.md.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "engine/errors.h"
#include "engine/training_run.h"

namespace {

using namespace ampscope::engine;

// The sizes docs/performance.md reports; pytorch_eager_step.py uses the same.
TrainConfig bench_config(ModelKind model, Precision precision, DeviceChoice device) {
  TrainConfig c;
  c.model.kind = model;
  c.precision = precision;
  c.device = device;
  c.optim.kind = OptimizerKind::kAdamW;
  c.steps = 1'000'000;
  c.seed = 1;
  switch (model) {
    case ModelKind::kMLP:
      c.model.layers = 4;
      c.model.width = 512;
      c.batch_size = 256;
      break;
    case ModelKind::kConvNet:
      c.model.layers = 2;
      c.model.width = 32;
      c.batch_size = 64;
      break;
    default:
      c.model.layers = 2;
      c.model.width = 128;
      c.model.heads = 4;
      c.model.seq_len = 64;
      c.batch_size = 16;
      break;
  }
  return c;
}

void step_time(benchmark::State& state, ModelKind model, Precision precision, DeviceChoice device) {
  try {
    TrainingRun run(bench_config(model, precision, device));
    int64_t step = 1;
    for (int i = 0; i < 5; ++i) run.step(step++);  // warm-up: allocator, autocast cache, kernels
    for (auto _ : state) {
      const StepEvent e = run.step(step++);
      state.SetIterationTime(e.step_time_ms / 1e3);
    }
    state.counters["samples/s"] =
        benchmark::Counter(static_cast<double>(state.iterations() * run.started_event().config.batch_size),
                           benchmark::Counter::kIsRate);
  } catch (const EngineError& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* env = std::getenv("AMPSCOPE_BENCH_DEVICE");
  const std::string device_name = env ? env : "cpu";
  const DeviceChoice device = device_name == "cuda" ? DeviceChoice::kCUDA : DeviceChoice::kCPU;
  for (ModelKind model : {ModelKind::kMLP, ModelKind::kConvNet, ModelKind::kGPT}) {
    for (Precision precision : {Precision::kFP32, Precision::kBF16, Precision::kFP16}) {
      benchmark::RegisterBenchmark(
          fmt::format("step/{}/{}/{}", device_name, to_string(model), to_string(precision)).c_str(),
          [=](benchmark::State& s) { step_time(s, model, precision, device); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(2.0)
          ->Repetitions(3)
          ->ReportAggregatesOnly(true);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
