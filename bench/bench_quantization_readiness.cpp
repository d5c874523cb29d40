// What precision readiness (issue #30) costs a gradient-sampled step on the CPU,
// as the capture runs it: the models hand each Linear layer's input and weight to
// a ReadinessRecorder during the forward, the weights and their unscaled gradients
// go through the same batched pass after the backward, and the sums come back in
// one transfer at the step's end (profiler/capture/readiness_recorder.h). Plain
// steps and readiness steps alternate in one run, so a machine shared with other
// work moves both alike; training-thread CPU time, medians. pass_ms: the readiness
// step's median less the plain step's; pass_over_step: that over the plain step.
// Run it with OMP_NUM_THREADS=1.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/module_scope.h"
#include "engine/training_run.h"
#include "profiler/capture/readiness_recorder.h"

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

// A TrainingObserver that is only the readiness capture, on every step it is given.
class ReadinessOnly final : public engine::TrainingObserver, public engine::ActivationSink {
 public:
  void on_step_begin(int64_t) override { engine::activation_sink() = this; }
  bool wants_gradients(int64_t) override { return true; }
  void on_unscaled_gradients(int64_t, const engine::NamedTensors& parameters, double) override {
    recorder_.measure_gradients(parameters);
  }
  void on_step_end(const engine::StepEvent& step) override {
    engine::activation_sink() = nullptr;
    samples_ = recorder_.take(step.step).size();
  }
  void on_module_output(const std::string&, const at::Tensor&) override {}
  void on_layer_input(const std::string& scope, const at::Tensor& input, const at::Tensor& weight) override {
    recorder_.on_layer_input(scope, input, weight);
  }
  size_t samples() const { return samples_; }

 private:
  profiler::ReadinessRecorder recorder_;
  size_t samples_ = 0;
};

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
  ReadinessOnly readiness;
  int64_t step = 1;
  for (int i = 0; i < 3; ++i) run.step(step++);
  run.step(step++, {&readiness});
  int64_t elements = 0, layers = 0;
  for (const auto& [name, p] : run.model().named_parameters()) {
    if (p.dim() < 2 || !name.ends_with(".weight")) continue;
    ++layers;
    elements += 2 * p.numel();  // the weight and its gradient
  }
  std::vector<double> step_ms, readiness_ms;
  for (auto _ : state) {
    int64_t t0 = thread_cpu_ns();
    run.step(step++);
    step_ms.push_back(static_cast<double>(thread_cpu_ns() - t0) / 1e6);
    t0 = thread_cpu_ns();
    run.step(step++, {&readiness});
    readiness_ms.push_back(static_cast<double>(thread_cpu_ns() - t0) / 1e6);
    state.SetIterationTime((step_ms.back() + readiness_ms.back()) / 1e3);
  }
  const double plain = median(step_ms), sampled = median(readiness_ms);
  state.counters["layers"] = benchmark::Counter(static_cast<double>(layers));
  state.counters["samples"] = benchmark::Counter(static_cast<double>(readiness.samples()));
  state.counters["weight_elements"] = benchmark::Counter(static_cast<double>(elements));
  state.counters["step_ms"] = benchmark::Counter(plain);
  state.counters["readiness_step_ms"] = benchmark::Counter(sampled);
  state.counters["pass_ms"] = benchmark::Counter(sampled - plain);
  state.counters["pass_over_step"] = benchmark::Counter(plain > 0 ? (sampled - plain) / plain : 0.0);
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
