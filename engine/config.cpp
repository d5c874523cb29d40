#include "engine/config.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <utility>

#include "engine/errors.h"

namespace ampscope::engine {
namespace {

template <typename Enum, size_t N>
using NameTable = std::array<std::pair<Enum, std::string_view>, N>;

constexpr NameTable<Precision, 3> kPrecisionNames{
    {{Precision::kFP32, "fp32"}, {Precision::kFP16, "fp16"}, {Precision::kBF16, "bf16"}}};
constexpr NameTable<DeviceChoice, 3> kDeviceNames{
    {{DeviceChoice::kAuto, "auto"}, {DeviceChoice::kCPU, "cpu"}, {DeviceChoice::kCUDA, "cuda"}}};
constexpr NameTable<ModelKind, 4> kModelNames{{{ModelKind::kMLP, "mlp"},
                                               {ModelKind::kConvNet, "convnet"},
                                               {ModelKind::kGPT, "gpt"},
                                               {ModelKind::kTorchScript, "torchscript"}}};
constexpr NameTable<DataKind, 5> kDataNames{{{DataKind::kSynthetic, "synthetic"},
                                             {DataKind::kMNIST, "mnist"},
                                             {DataKind::kCIFAR10, "cifar10"},
                                             {DataKind::kText, "text"},
                                             {DataKind::kCSV, "csv"}}};
constexpr NameTable<OptimizerKind, 3> kOptimizerNames{
    {{OptimizerKind::kSGD, "sgd"}, {OptimizerKind::kAdam, "adam"}, {OptimizerKind::kAdamW, "adamw"}}};
constexpr NameTable<ScheduleKind, 2> kScheduleNames{
    {{ScheduleKind::kConstant, "constant"}, {ScheduleKind::kCosine, "cosine"}}};
constexpr NameTable<AttentionKind, 2> kAttentionNames{
    {{AttentionKind::kSDPA, "sdpa"}, {AttentionKind::kMath, "math"}}};
constexpr NameTable<RecipeKind, 4> kRecipeNames{{{RecipeKind::kStandard, "standard"},
                                                 {RecipeKind::kMultiLoss, "multi-loss"},
                                                 {RecipeKind::kGradientPenalty, "gradient-penalty"},
                                                 {RecipeKind::kCustomFunction, "custom-function"}}};

template <typename Enum, size_t N>
std::string_view name_of(const NameTable<Enum, N>& table, Enum value) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  return "unknown";
}

template <typename Enum, size_t N>
std::optional<Enum> parse_name(const NameTable<Enum, N>& table, std::string_view text) {
  for (const auto& [v, name] : table)
    if (name == text) return v;
  return std::nullopt;
}

void require(bool ok, std::string_view message) {
  if (!ok) throw ConfigError(std::string(message));
}

}  // namespace

std::string_view to_string(Precision p) { return name_of(kPrecisionNames, p); }
std::string_view to_string(DeviceChoice d) { return name_of(kDeviceNames, d); }
std::string_view to_string(ModelKind m) { return name_of(kModelNames, m); }
std::string_view to_string(DataKind d) { return name_of(kDataNames, d); }
std::string_view to_string(OptimizerKind o) { return name_of(kOptimizerNames, o); }
std::string_view to_string(ScheduleKind s) { return name_of(kScheduleNames, s); }
std::string_view to_string(AttentionKind a) { return name_of(kAttentionNames, a); }
std::string_view to_string(RecipeKind r) { return name_of(kRecipeNames, r); }

std::optional<Precision> parse_precision(std::string_view s) { return parse_name(kPrecisionNames, s); }
std::optional<DeviceChoice> parse_device(std::string_view s) { return parse_name(kDeviceNames, s); }
std::optional<ModelKind> parse_model(std::string_view s) { return parse_name(kModelNames, s); }
std::optional<DataKind> parse_data(std::string_view s) { return parse_name(kDataNames, s); }
std::optional<OptimizerKind> parse_optimizer(std::string_view s) { return parse_name(kOptimizerNames, s); }
std::optional<ScheduleKind> parse_schedule(std::string_view s) { return parse_name(kScheduleNames, s); }
std::optional<AttentionKind> parse_attention(std::string_view s) { return parse_name(kAttentionNames, s); }
std::optional<RecipeKind> parse_recipe(std::string_view s) { return parse_name(kRecipeNames, s); }

void validate(const TrainConfig& c) {
  require(c.steps > 0, "--steps must be > 0");
  require(c.batch_size > 0, "--batch-size must be > 0");
  require(c.accumulation_steps >= 1, "--accumulate must be >= 1");
  require(c.clip_grad_norm >= 0.0 && std::isfinite(c.clip_grad_norm), "--clip-grad-norm must be >= 0");
  require(c.max_consecutive_skips > 0, "--max-consecutive-skips must be > 0");
  require(c.eval_every >= 0, "--eval-every must be >= 0 (0 = no validation)");
  require(c.eval_batches > 0, "--eval-batches must be > 0");
  require(c.optim.lr > 0.0 && std::isfinite(c.optim.lr), "--lr must be a positive number");
  require(c.optim.warmup_steps >= 0, "--warmup-steps must be >= 0");
  require(c.optim.min_lr_ratio >= 0.0 && c.optim.min_lr_ratio <= 1.0,
          fmt::format("--min-lr-ratio must be in [0, 1] (the final lr as a fraction of --lr), got {:g}",
                      c.optim.min_lr_ratio));
  require(c.optim.schedule == ScheduleKind::kCosine || c.optim.warmup_steps == 0,
          "--warmup-steps needs --schedule cosine");

  const ModelConfig& m = c.model;
  require(m.layers >= 1, "--layers must be >= 1");
  require(m.width >= 1, "--width must be >= 1");
  if (m.kind == ModelKind::kGPT) {
    require(m.heads >= 1, "--heads must be >= 1");
    require(m.width % m.heads == 0,
            fmt::format("--width {} is not a multiple of --heads {}", m.width, m.heads));
    require(m.seq_len >= 2, "--seq-len must be >= 2");
  }
  require(m.kind != ModelKind::kTorchScript || !m.torchscript_path.empty(),
          "--model torchscript needs --torchscript FILE");
  require(m.kind == ModelKind::kTorchScript || m.torchscript_path.empty(),
          "--torchscript FILE needs --model torchscript");

  const DataConfig& d = c.data;
  require(d.kind == DataKind::kSynthetic || !d.path.empty(),
          fmt::format("--data {} needs --data-path", to_string(d.kind)));
  require(d.kind != DataKind::kSynthetic || d.path.empty(), "--data-path needs --data mnist|cifar10|text|csv");
  require(d.synthetic_samples > 0, "--synthetic-samples must be > 0");
  require(d.vocab_size >= 2, "--vocab-size must be >= 2");
  require(d.csv_target_column >= -1,
          "--csv-target-column must be a 0-based column index, or -1 for the last column");

  const int64_t models = c.recipe == RecipeKind::kMultiLoss ? 2 : 1;
  for (const InfInjection& inject : c.inject_inf) {
    require(inject.step >= 1 && inject.step <= c.steps,
            fmt::format("--inject-inf step {} is not a step of this run (1 to {})", inject.step, c.steps));
    require(inject.model >= 0 && inject.model < models,
            models == 2 ? "--inject-inf model must be a or b" : "--inject-inf STEP:b needs --recipe multi-loss");
  }
  if (c.recipe == RecipeKind::kGradientPenalty) {
    // The penalty differentiates the backward pass, so every op must have a double backward;
    // the fused attention kernels (flash, memory-efficient, the CPU's) have none.
    require(m.kind != ModelKind::kGPT || m.attention == AttentionKind::kMath,
            "--recipe gradient-penalty differentiates the backward, which fused attention cannot: "
            "add --attention math");
  }

  if (c.scaler_enabled()) {
    require(c.precision != Precision::kFP32,
            "a loss scaler is for fp16 (or bf16) autocast; fp32 has nothing to scale: drop --scaler");
    const ScalerConfig& s = c.scaler;
    require(s.init_scale > 0.0 && std::isfinite(s.init_scale), "--init-scale must be a positive number");
    require(s.growth_factor > 1.0 && std::isfinite(s.growth_factor), "--growth-factor must be > 1");
    require(s.backoff_factor > 0.0 && s.backoff_factor < 1.0, "--backoff-factor must be in (0, 1)");
    require(s.growth_interval > 0, "--growth-interval must be > 0");
  }
}

}  // namespace ampscope::engine
