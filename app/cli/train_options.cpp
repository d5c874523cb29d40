#include "app/cli/train_options.h"

#include <fmt/format.h>

#include <charconv>
#include <limits>

#include "app/cli/message_excerpt.h"
#include "engine/errors.h"

namespace ampscope::cli {
namespace {

template <typename Enum>
Enum parse_or_throw(std::optional<Enum> parsed, const std::string& flag, const std::string& value) {
  if (!parsed) throw engine::ConfigError(fmt::format("{}: unknown value '{}'", flag, message_excerpt(value)));
  return *parsed;
}

const char* const kScalerFlags[] = {"--init-scale", "--growth-factor", "--backoff-factor",
                                    "--growth-interval"};

}  // namespace

void TrainOptions::add_to(CLI::App& cmd) {
  auto& c = config_;
  // A flag given twice (or in the config file and on the command line) takes its last value.
  cmd.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd.add_option("--model", model_, "mlp | convnet | gpt | torchscript")
      ->check(CLI::IsMember({"mlp", "convnet", "gpt", "torchscript"}))
      ->capture_default_str()->group("Model");
  cmd.add_option("--torchscript", c.model.torchscript_path,
                 "A module saved by torch.jit.save, for --model torchscript (TorchScript is "
                 "deprecated upstream; it is supported as long as LibTorch loads it)")
      ->group("Model");
  cmd.add_option("--layers", c.model.layers, "Hidden layers (mlp), residual blocks (convnet), decoder blocks (gpt)")
      ->capture_default_str()->group("Model");
  cmd.add_option("--width", c.model.width, "Hidden width (mlp), channels (convnet), embedding size (gpt)")
      ->capture_default_str()->group("Model");
  cmd.add_option("--heads", c.model.heads, "Attention heads (gpt)")->capture_default_str()->group("Model");
  cmd.add_option("--seq-len", c.model.seq_len, "Context length in tokens (gpt)")->capture_default_str()->group("Model");
  cmd.add_flag("--untied-head", untied_head_, "GPT: a separate output head instead of the token embedding's weight")
      ->group("Model");
  cmd.add_option("--attention", attention_,
                 "GPT: sdpa (one scaled_dot_product_attention op) | math (written out: matmul, "
                 "masked_fill, softmax kept in fp32, matmul)")
      ->check(CLI::IsMember({"sdpa", "math"}))->capture_default_str()->group("Model");
  cmd.add_flag("--channels-last", c.model.channels_last,
               "ConvNet: weights and input in channels_last (NHWC) memory format")
      ->group("Model");

  cmd.add_option("--data", data_, "synthetic | mnist | cifar10 | text | csv")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            // `--data train.csv` is a common slip: say where the file goes.
            if (value.find_first_of("/.") == std::string::npos) return {};
            return "'" + value + "' is a file; --data takes the kind (synthetic | mnist | cifar10 | text | csv) "
                   "and --data-path the file";
          },
          "", "data kind"))
      ->check(CLI::IsMember({"synthetic", "mnist", "cifar10", "text", "csv"}))
      ->capture_default_str()->group("Data");
  cmd.add_option("--data-path", c.data.path,
                 "MNIST images IDX file, CIFAR-10 directory or .bin, text file, or CSV file")->group("Data");
  cmd.add_option("--labels-path", c.data.labels_path, "MNIST labels IDX file (default: derived from --data-path)")
      ->group("Data");
  cmd.add_option("--synthetic-samples", c.data.synthetic_samples, "Size of the synthetic data set")
      ->capture_default_str()->group("Data");
  cmd.add_option("--vocab-size", c.data.vocab_size, "Tokens in the synthetic language task")
      ->capture_default_str()->group("Data");
  cmd.add_option("--csv-target-column", c.data.csv_target_column, "CSV: the target column (-1 = last)")
      ->capture_default_str()->group("Data");

  cmd.add_option("--precision", precision_, "fp32 | fp16 (autocast + loss scaler) | bf16 (autocast)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}))->capture_default_str()->group("Precision");
  cmd.add_option("--device", device_, "auto | cpu | cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))->capture_default_str()->group("Precision");
  cmd.add_flag("--scaler", scaler_on_, "Use a loss scaler (default: on for fp16, off otherwise)")->group("Precision");
  cmd.add_flag("--no-scaler", scaler_off_, "No loss scaler, also for fp16")->group("Precision");
  cmd.add_option("--init-scale", c.scaler.init_scale, "Initial loss scale")->capture_default_str()->group("Precision");
  cmd.add_option("--growth-factor", c.scaler.growth_factor, "Scale multiplier after --growth-interval clean steps")
      ->capture_default_str()->group("Precision");
  cmd.add_option("--backoff-factor", c.scaler.backoff_factor, "Scale multiplier after a step with inf/NaN gradients")
      ->capture_default_str()->group("Precision");
  cmd.add_option("--growth-interval", c.scaler.growth_interval, "Clean steps before the scale grows")
      ->capture_default_str()->group("Precision");

  cmd.add_option("--optimizer", optimizer_, "sgd (with momentum) | adam | adamw")
      ->check(CLI::IsMember({"sgd", "adam", "adamw"}))->capture_default_str()->group("Optimization");
  cmd.add_flag("--fused", c.optim.fused,
               "One fused kernel per optimizer step (_fused_sgd_/_fused_adam_/_fused_adamw_) "
               "instead of multi-tensor (foreach) updates")
      ->group("Optimization");
  cmd.add_option("--lr", c.optim.lr, "Learning rate")->capture_default_str()->group("Optimization");
  cmd.add_option("--momentum", c.optim.momentum, "SGD momentum")->capture_default_str()->group("Optimization");
  cmd.add_option("--weight-decay", c.optim.weight_decay, "Weight decay (decoupled for adamw)")
      ->capture_default_str()->group("Optimization");
  cmd.add_option("--schedule", schedule_, "constant | cosine (with --warmup-steps)")
      ->check(CLI::IsMember({"constant", "cosine"}))->capture_default_str()->group("Optimization");
  cmd.add_option("--warmup-steps", c.optim.warmup_steps, "Linear warm-up steps (cosine)")
      ->capture_default_str()->group("Optimization");
  cmd.add_option("--min-lr-ratio", c.optim.min_lr_ratio, "Cosine: final lr as a fraction of --lr")
      ->capture_default_str()->group("Optimization");
  cmd.add_flag("--tf32", c.allow_tf32, "CUDA: let fp32 matmuls and convolutions use TF32 Tensor Cores")
      ->group("Precision");
  cmd.add_option("--clip-grad-norm", c.clip_grad_norm, "Clip the total norm of the unscaled gradients (0 = off)")
      ->capture_default_str()->group("Optimization");

  cmd.add_option("--recipe", recipe_,
                 "The step's AMP pattern: standard | multi-loss (two models, losses and optimizers, one "
                 "scaler) | gradient-penalty (autograd::grad of the scaled loss) | custom-function "
                 "(custom autograd Functions, one forced to fp32)")
      ->check(CLI::IsMember({"standard", "multi-loss", "gradient-penalty", "custom-function"}))
      ->capture_default_str()->group("Optimization");
  cmd.add_option("--inject-inf", inject_inf_,
                 "Fault injection: STEP[:a|b][,...] sets one gradient element of model A (or B, "
                 "multi-loss) to inf at those steps, as an fp16 overflow would, to see the skip path")
      ->group("Optimization");

  cmd.add_option("--steps", c.steps, "Optimizer steps")->capture_default_str()->group("Run");
  cmd.add_option("--batch-size", c.batch_size, "Samples per micro-batch")->capture_default_str()->group("Run");
  cmd.add_option("--accumulate", c.accumulation_steps, "Micro-batches accumulated per optimizer step")
      ->capture_default_str()->group("Run");
  cmd.add_option("--seed", c.seed, "Seed for weights and data order (runs are deterministic for a seed)")
      ->capture_default_str()->group("Run");
  cmd.add_option("--eval-every", c.eval_every,
                 "Validation loss every N optimizer steps, in inference mode under autocast (0 = off)")
      ->capture_default_str()->group("Run");
  cmd.add_option("--eval-batches", c.eval_batches, "Batches per validation (the same ones every time)")
      ->capture_default_str()->group("Run");
  cmd.add_option("--max-consecutive-skips", c.max_consecutive_skips,
                 "Declare the run diverged after this many skipped steps in a row")
      ->capture_default_str()->group("Run");
  check_whole_numbers(cmd);
}

void TrainOptions::check_whole_numbers(CLI::App& cmd) {
  // CLI11 reads a whole number past 64 bits as the largest one: --steps 99999999999999999999
  // would train for ever. Refused instead, on every integer flag.
  const CLI::Validator fits(
      [](std::string& value) -> std::string {
        int64_t parsed = 0;
        const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
        if (error == std::errc::result_out_of_range)
          return fmt::format("{} is too large (at most {})", message_excerpt(value),
                             std::numeric_limits<int64_t>::max());
        return {};
      },
      "", "64-bit range");
  for (CLI::Option* option : cmd.get_options())
    if (option->get_type_name() == "INT") option->check(fits);
}

engine::TrainConfig TrainOptions::finish(const CLI::App& cmd) const {
  engine::TrainConfig c = config_;
  c.model.kind = parse_or_throw(engine::parse_model(model_), "--model", model_);
  c.model.tied_head = !untied_head_;
  c.model.attention = parse_or_throw(engine::parse_attention(attention_), "--attention", attention_);
  if (c.model.kind != engine::ModelKind::kGPT && cmd.count("--attention") > 0)
    throw engine::ConfigError("--attention is a GPT setting; use --model gpt");
  if (c.model.kind != engine::ModelKind::kConvNet && c.model.channels_last)
    throw engine::ConfigError("--channels-last is a ConvNet setting; use --model convnet");
  c.data.kind = parse_or_throw(engine::parse_data(data_), "--data", data_);
  c.recipe = parse_or_throw(engine::parse_recipe(recipe_), "--recipe", recipe_);
  // --inject-inf 3,5:b,7:a
  for (size_t start = 0; start < inject_inf_.size();) {
    const size_t comma = std::min(inject_inf_.find(',', start), inject_inf_.size());
    const std::string item = inject_inf_.substr(start, comma - start);
    start = comma + 1;
    const size_t colon = item.find(':');
    const std::string step = item.substr(0, colon);
    const std::string model = colon == std::string::npos ? "a" : item.substr(colon + 1);
    engine::InfInjection inject;
    size_t used = 0;
    try {
      inject.step = std::stoll(step, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != step.size() || inject.step < 1 || (model != "a" && model != "b"))
      throw engine::ConfigError(fmt::format(
          "--inject-inf '{}': expected STEP[:a|b] items separated by commas, STEP >= 1", inject_inf_));
    inject.model = model == "b" ? 1 : 0;
    c.inject_inf.push_back(inject);
  }
  c.precision = parse_or_throw(engine::parse_precision(precision_), "--precision", precision_);
  c.device = parse_or_throw(engine::parse_device(device_), "--device", device_);
  c.optim.kind = parse_or_throw(engine::parse_optimizer(optimizer_), "--optimizer", optimizer_);
  c.optim.schedule = parse_or_throw(engine::parse_schedule(schedule_), "--schedule", schedule_);
  if (scaler_on_ && scaler_off_) throw engine::ConfigError("--scaler and --no-scaler contradict each other");
  if (scaler_on_) c.use_scaler = true;
  if (scaler_off_) c.use_scaler = false;
  if (!c.scaler_enabled()) {
    for (const char* flag : kScalerFlags) {
      if (cmd.count(flag) > 0)
        throw engine::ConfigError(fmt::format(
            "{} has no effect without a loss scaler (it is on by default for fp16 only; add --scaler)", flag));
    }
  }
  if (c.optim.kind != engine::OptimizerKind::kSGD && cmd.count("--momentum") > 0)
    throw engine::ConfigError("--momentum is an SGD setting; use --optimizer sgd");
  engine::validate(c);
  return c;
}

}  // namespace ampscope::cli
