// What the precision-readiness pass (issue #30) costs a sampled step on the CPU:
// for every weight with two or more dimensions, the weight and an input of the
// shape the layer sees ([batch * sequence, in_features], bf16), all six formats
// (profiler/capture/quantization_sim.h) in one batched pass, their sums brought back in one transfer. Plain steps and
// readiness passes alternate in one run, so a machine shared with other work moves
// both alike; training-thread CPU time. pass_over_step: the pass's median over the
// plain steps' median. Run it with OMP_NUM_THREADS=1.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/training_run.h"
#include "profiler/capture/quantization_sim.h"

namespace {

using namespace ampscope;

int64_t thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

engine::TrainConfig config_for(engine::ModelKind kind, int64_t layers, int64_t width) {
  engine::TrainConfig c;
  c.model.kind = kind;
  c.model.layers = layers;
  c.model.width = width;
  if (kind == engine::ModelKind::kGPT) {
    c.model.heads = width / 64;
    c.model.seq_len = 64;
    c.data.vocab_size = 64;
    c.batch_size = 8;
  } else {
    c.batch_size = 16;
  }
  c.precision = engine::Precision::kBF16;
  c.device = engine::DeviceChoice::kCPU;
  c.steps = 1'000'000;
  return c;
}

void readiness_cost(benchmark::State& state, engine::TrainConfig config) {
  engine::TrainingRun run(config);
  const int64_t tokens = config.batch_size * (config.model.kind == engine::ModelKind::kGPT ? config.model.seq_len : 1);
  // Each weight and an input of the shape its layer sees, as the capture hands them over.
  std::vector<at::Tensor> matrices;
  int64_t layers = 0, elements = 0;
  for (const auto& [name, p] : run.model().named_parameters()) {
    if (p.dim() < 2 || !name.ends_with(".weight")) continue;
    const at::Tensor w = profiler::scaling_matrix(p, profiler::TensorRole::weight);
    matrices.push_back(w);
    matrices.push_back(at::randn({tokens, w.size(1)}).to(at::kBFloat16));
    elements += p.numel() + tokens * w.size(1);
    ++layers;
  }
  // One batched pass over all of them, the sums back in one transfer.
  const auto pass = [&] { return profiler::quantization_sums(matrices).sums.cpu(); };
  int64_t step = 1;
  for (int i = 0; i < 3; ++i) run.step(step++);
  pass();
  std::vector<double> step_ms, pass_ms;
  for (auto _ : state) {
    int64_t t0 = thread_cpu_ns();
    run.step(step++);
    step_ms.push_back(static_cast<double>(thread_cpu_ns() - t0) / 1e6);
    t0 = thread_cpu_ns();
    benchmark::DoNotOptimize(pass());
    pass_ms.push_back(static_cast<double>(thread_cpu_ns() - t0) / 1e6);
    state.SetIterationTime((step_ms.back() + pass_ms.back()) / 1e3);
  }
  const double plain = median(step_ms), readiness = median(pass_ms);
  state.counters["layers"] = benchmark::Counter(static_cast<double>(layers));
  state.counters["elements"] = benchmark::Counter(static_cast<double>(elements));
  state.counters["step_ms"] = benchmark::Counter(plain);
  state.counters["pass_ms"] = benchmark::Counter(readiness);
  state.counters["pass_over_step"] = benchmark::Counter(plain > 0 ? readiness / plain : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::pair<std::string, engine::TrainConfig>> models{
      {"gpt2x256", config_for(engine::ModelKind::kGPT, 2, 256)},
      {"mlp4x32", config_for(engine::ModelKind::kMLP, 4, 32)},
      {"mlp64x32", config_for(engine::ModelKind::kMLP, 64, 32)},
  };
  for (const auto& [name, config] : models) {
    benchmark::RegisterBenchmark(fmt::format("readiness/cpu/{}", name).c_str(),
                                 [config](benchmark::State& s) { readiness_cost(s, config); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(2.0)
        ->Repetitions(3)
        ->ReportAggregatesOnly(true);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
