#include "profiler/compare/comparison_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <set>

#include <c10/util/Exception.h>

#include "engine/device.h"
#include "engine/errors.h"
#include "engine/run_follower.h"
#include "engine/trainer.h"
#include "engine/training_run.h"
#include "profiler/capture/profiler.h"
#include "profiler/capture/session_meta.h"
#include "profiler/capture/step_record.h"
#include "profiler/store/comparison_store.h"

namespace ampscope::profiler {
namespace {

constexpr const char* kKnownVariants[] = {"fp32", "tf32", "fp16", "bf16"};

struct RunOutcome {
  std::vector<StepRecord> steps;
  std::optional<engine::RunStartedEvent> started;
  engine::RunState state = engine::RunState::kIdle;
  std::string error;
};

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

std::vector<std::string> parse_variants(std::string_view list, std::string_view flag) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    std::string name(list.substr(start, comma - start));
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (!name.empty()) {
      if (std::find(std::begin(kKnownVariants), std::end(kKnownVariants), name) == std::end(kKnownVariants))
        throw engine::ConfigError(
            fmt::format("unknown precision '{}' in {} (use fp32, tf32, fp16, bf16)", name, flag));
      if (!seen.insert(name).second) throw engine::ConfigError(fmt::format("{} names '{}' twice", flag, name));
      out.push_back(name);
    }
    start = comma + 1;
  }
  if (out.empty()) throw engine::ConfigError(fmt::format("{} names no precision", flag));
  return out;
}

engine::TrainConfig variant_config(const engine::TrainConfig& base, std::string_view variant) {
  engine::TrainConfig c = base;
  c.allow_tf32 = variant == "tf32";
  c.precision = variant == "fp16"   ? engine::Precision::kFP16
                : variant == "bf16" ? engine::Precision::kBF16
                                    : engine::Precision::kFP32;
  // Each precision gets its usual recipe: GradScaler with fp16 only.
  c.use_scaler = std::nullopt;
  return c;
}

void validate(const ComparisonOptions& o) {
  if (o.variants.empty()) throw engine::ConfigError("a comparison needs at least one precision");
  if (o.repeats < 1) throw engine::ConfigError("--repeats must be >= 1");
  if (o.warmup_steps < 0) throw engine::ConfigError("--warmup must be >= 0");
  if (o.profile_steps < 0) throw engine::ConfigError("--profile-steps must be >= 0");
  if (o.warmup_steps >= o.base.steps)
    throw engine::ConfigError(fmt::format("--warmup ({}) must be less than --steps ({}): no step would be timed",
                                          o.warmup_steps, o.base.steps));
  engine::validate(o.base);
  const bool on_cuda = engine::resolve_device(o.base.device).is_cuda();
  if (!on_cuda && std::find(o.variants.begin(), o.variants.end(), "tf32") != o.variants.end())
    throw engine::ConfigError("tf32 needs a CUDA device (TF32 is a Tensor Core format; the CPU has none)");
}

ComparisonRunner::ComparisonRunner(ComparisonOptions options) : options_(std::move(options)) {}

Comparison ComparisonRunner::run(const std::function<void(const ComparisonProgress&)>& progress) {
  validate(options_);
  // Every variant runs on the same device, even when the base says "auto".
  engine::TrainConfig base = options_.base;
  base.device = engine::resolve_device(base.device).is_cuda() ? engine::DeviceChoice::kCUDA : engine::DeviceChoice::kCPU;

  Comparison result;
  result.inference = options_.inference;
  result.warmup_steps = options_.warmup_steps;
  result.planned_repeats = options_.repeats;
  result.effective_batch = base.batch_size * (options_.inference ? 1 : base.accumulation_steps);
  for (const auto& name : options_.variants) {
    VariantRun v;
    v.variant = name;
    const auto c = variant_config(base, name);
    v.precision = std::string(engine::to_string(c.precision));
    v.tf32 = c.allow_tf32;
    v.scaler = c.scaler_enabled() && !options_.inference;  // inference has no backward to scale
    result.variants.push_back(std::move(v));
  }

  std::unique_ptr<ComparisonWriter> writer;
  const bool profile = options_.profile_steps > 0 && !options_.inference;
  const int64_t profile_runs = profile ? 1 : 0;
  const int64_t run_count = static_cast<int64_t>(result.variants.size()) * (options_.repeats + profile_runs);
  int64_t run_index = 0;

  // One training run on the engine's thread; its steps come back through the event queue.
  auto train = [&](const engine::TrainConfig& config, const std::string& variant, int64_t repeat,
                   engine::TrainingObserver* observer) {
    RunOutcome outcome;
    engine::Trainer trainer(config);
    // Room for every event of the run: a comparison must not lose a step's time.
    auto queue = trainer.subscribe(static_cast<size_t>(config.steps) + 16);
    if (observer) trainer.add_observer(observer);
    trainer.start();
    ComparisonProgress p{variant, repeat, run_index, run_count, 0, config.steps, 0.0, {}};
    engine::follow_run(
        trainer, *queue,
        [&](const engine::Event& event) {
          if (const auto* started = std::get_if<engine::RunStartedEvent>(&event)) outcome.started = *started;
          if (const auto* step = std::get_if<engine::StepEvent>(&event)) {
            outcome.steps.push_back(to_step_record(*step));
            p.step = step->step;
            p.loss = step->loss;
            if (progress) progress(p);
          }
        },
        [this] { return stop_requested_.load(); });
    trainer.wait();
    outcome.state = trainer.state();
    outcome.error = trainer.error_message();
    return outcome;
  };

  // One inference run on this thread: base.steps timed batches of a freshly built model.
  auto infer = [&](const engine::TrainConfig& config, const std::string& variant, int64_t repeat) {
    RunOutcome outcome;
    try {
      engine::TrainingRun run(config);
      outcome.started = run.started_event();
      ComparisonProgress p{variant, repeat, run_index, run_count, 0, config.steps, 0.0, {}};
      for (int64_t batch = 1; batch <= config.steps; ++batch) {
        if (stop_requested_.load()) {
          outcome.state = engine::RunState::kStopped;
          return outcome;
        }
        const engine::StepEvent event = run.infer(batch);
        outcome.steps.push_back(to_step_record(event));
        p.step = batch;
        p.loss = event.loss;
        if (progress) progress(p);
      }
      outcome.state = engine::RunState::kFinished;
    } catch (const engine::EngineError& e) {
      outcome.state = engine::RunState::kFailed;
      outcome.error = e.what();
    } catch (const c10::OutOfMemoryError& e) {
      outcome.state = engine::RunState::kFailed;
      outcome.error = fmt::format("out of memory at inference batch {}: {} (lower --batch-size or the model size)",
                                  outcome.steps.size() + 1, first_line(e.what_without_backtrace()));
    } catch (const c10::Error& e) {
      outcome.state = engine::RunState::kFailed;
      outcome.error = fmt::format("LibTorch error at inference batch {}: {}", outcome.steps.size() + 1,
                                  first_line(e.what_without_backtrace()));
    } catch (const std::exception& e) {
      outcome.state = engine::RunState::kFailed;
      outcome.error = e.what();
    }
    return outcome;
  };

  auto fail_variant = [&](VariantRun& v, const std::string& error) {
    v.error = error;
    if (writer) writer->set_error(v.variant, error);
  };

  auto report_finished = [&](const std::string& message) {
    if (!progress) return;
    ComparisonProgress p;
    p.run_index = run_index;
    p.run_count = run_count;
    p.finished_message = message;
    p.so_far = &result;
    progress(p);
  };

  for (int64_t repeat = 0; repeat < options_.repeats && !stop_requested_.load(); ++repeat) {
    for (auto& v : result.variants) {
      if (stop_requested_.load()) break;
      if (!v.error.empty()) {
        ++run_index;
        continue;
      }
      RunOutcome outcome = options_.inference ? infer(variant_config(base, v.variant), v.variant, repeat)
                                              : train(variant_config(base, v.variant), v.variant, repeat, nullptr);
      if (!writer && outcome.started) {
        // The first run that started describes the comparison: model, data, device.
        result.meta = make_session_meta(*outcome.started);
        result.meta.precision = "";
        result.meta.gpu_tracing = "";
        if (!options_.out_path.empty()) {
          writer = ComparisonWriter::create(options_.out_path, result, options_.overwrite);
          for (const auto& described : result.variants) writer->add_variant(described);
        }
      }
      if (outcome.state == engine::RunState::kFinished) {
        if (writer) writer->add_repeat(v.variant, repeat, outcome.steps);
        const std::string message =
            fmt::format("{} #{}: median {:.3f} ms/{}, {} loss {:.4f}", v.variant, repeat + 1,
                        median_step_ms(outcome.steps, options_.warmup_steps), timed_unit(result),
                        options_.inference ? "last batch's" : "final",
                        outcome.steps.empty() ? std::nan("") : outcome.steps.back().loss);
        v.repeats.push_back(std::move(outcome.steps));
        report_finished(message);
      } else if (outcome.state == engine::RunState::kFailed) {
        fail_variant(v, outcome.error);
        report_finished(fmt::format("{} #{}: failed: {}", v.variant, repeat + 1, outcome.error));
      }
      // A stopped run is incomplete: its steps would bias the timing, so it is left out.
      ++run_index;
    }
  }

  if (profile) {
    for (auto& v : result.variants) {
      if (stop_requested_.load()) break;
      if (!v.error.empty()) {
        ++run_index;
        continue;
      }
      engine::TrainConfig config = variant_config(base, v.variant);
      config.steps = std::min(config.steps, options_.warmup_steps + options_.profile_steps);
      ProfilerOptions profiler_options;
      profiler_options.capture.window_start = std::min(options_.warmup_steps + 1, config.steps);
      profiler_options.capture.window_steps = options_.profile_steps;
      profiler_options.capture.gradient_every = 0;
      profiler_options.op_step_samples = static_cast<size_t>(options_.profile_steps);  // per-op medians
      Profiler profiler(profiler_options);
      const RunOutcome outcome = train(config, v.variant, -1, &profiler);
      if (outcome.state == engine::RunState::kFinished) {
        v.op_stats = profiler.snapshot()->op_stats;
        v.profiled_steps = config.steps - profiler_options.capture.window_start + 1;
        if (writer) writer->set_profile(v.variant, v.op_stats, v.profiled_steps);
        if (writer && result.meta.gpu_tracing.empty()) {
          result.meta.gpu_tracing = profiler.gpu_tracing();
          writer->set_meta("gpu_tracing", result.meta.gpu_tracing);
        }
        report_finished(fmt::format("{}: op table from {} profiled steps", v.variant, v.profiled_steps));
      } else if (outcome.state == engine::RunState::kFailed) {
        fail_variant(v, "profiled pass: " + outcome.error);
      }
      ++run_index;
    }
  }
  if (writer) writer->set_meta("final_state", stop_requested_.load() ? "stopped" : "finished");
  return result;
}

}  // namespace ampscope::profiler
