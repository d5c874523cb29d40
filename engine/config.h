#pragma once
// Everything a training run is made of, as plain values: the CLI, config files
// and the GUI fill a TrainConfig, and the engine builds a run from it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ampscope::engine {

enum class Precision { kFP32, kFP16, kBF16 };
enum class DeviceChoice { kAuto, kCPU, kCUDA };
enum class ModelKind { kMLP, kConvNet, kGPT, kTorchScript };
enum class DataKind { kSynthetic, kMNIST, kCIFAR10, kText, kCSV };
enum class OptimizerKind { kSGD, kAdam, kAdamW };
enum class ScheduleKind { kConstant, kCosine };
// GPT attention: one scaled_dot_product_attention op (flash/cuDNN/memory-efficient kernels on
// CUDA, the fused CPU kernel), or written out (matmul, masked_fill, softmax kept in fp32 by
// autocast, matmul) so the op table shows each autocast decision.
enum class AttentionKind { kSDPA, kMath };
// The training step's pattern, after the AMP examples of PyTorch's documentation:
// - standard: one model, one loss, one optimizer;
// - multi-loss: two models (A and B), two losses mixing both outputs, two optimizers, one
//   scaler: scale each loss, unscale_ A's optimizer (for its clipping), step each, one update;
//   each optimizer's found-inf and skip decision is its own;
// - gradient-penalty: autograd::grad of the scaled loss with create_graph, unscaled by hand,
//   the gradient norm added to the loss under autocast, then the usual scaled backward;
// - custom-function: the model's output goes through two custom autograd Functions, one
//   that needs fp32 (autocast off inside, inputs cast to fp32, as custom_fwd(cast_inputs=
//   torch.float32)) and one that follows the surrounding autocast state (custom_fwd()).
enum class RecipeKind { kStandard, kMultiLoss, kGradientPenalty, kCustomFunction };

struct ModelConfig {
  ModelKind kind = ModelKind::kMLP;
  int64_t layers = 2;      // hidden layers (MLP), residual blocks (ConvNet), decoder blocks (GPT)
  int64_t width = 128;     // hidden width (MLP), channels (ConvNet), embedding size (GPT)
  int64_t heads = 4;       // GPT attention heads; width must be a multiple of it
  int64_t seq_len = 64;    // GPT context length in tokens
  bool tied_head = true;   // GPT: the output head shares the token embedding's weight
  AttentionKind attention = AttentionKind::kSDPA;  // GPT only; other models ignore it
  // ConvNet: weights and input in channels_last (NHWC) memory format, which Tensor Core
  // convolutions want (cuDNN otherwise transposes NCHW tensors on every call). Other models ignore it.
  bool channels_last = false;
  std::string torchscript_path;  // kTorchScript: a file saved by torch.jit.save
};

struct DataConfig {
  DataKind kind = DataKind::kSynthetic;
  std::string path;  // a file (IDX images, text, CSV) or a directory (CIFAR-10 batches)
  std::string labels_path;  // MNIST: the IDX labels file; empty means derive it from path
  int64_t synthetic_samples = 8192;  // size of the synthetic data set
  int64_t vocab_size = 64;           // synthetic token task only
  int64_t csv_target_column = -1;    // CSV: which column is the target; -1 means the last
};

// Same defaults as torch.amp.GradScaler.
struct ScalerConfig {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

struct OptimConfig {
  OptimizerKind kind = OptimizerKind::kAdamW;
  double lr = 1e-3;
  double momentum = 0.9;        // SGD only
  double weight_decay = 0.0;    // SGD/Adam: L2 in the gradient; AdamW: decoupled
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  ScheduleKind schedule = ScheduleKind::kConstant;
  int64_t warmup_steps = 0;     // cosine: linear warm-up from 0 to lr
  double min_lr_ratio = 0.0;    // cosine: the lr it decays to, as a fraction of lr
  // Multi-tensor (foreach) updates are the default, as in torch.optim on CUDA; fused uses
  // ATen's one-kernel _fused_sgd_/_fused_adam_/_fused_adamw_ (CUDA, and the CPU since torch 2.4).
  bool fused = false;
};

struct InfInjection {
  int64_t step = 0;   // 1-based optimizer step
  int64_t model = 0;  // 0 = A, 1 = B
  bool operator==(const InfInjection&) const = default;
};

struct TrainConfig {
  ModelConfig model;
  DataConfig data;
  Precision precision = Precision::kFP32;
  // CUDA: fp32 matmuls and convolutions run on TF32 Tensor Cores (10-bit mantissa),
  // like torch.backends.{cuda.matmul,cudnn}.allow_tf32. Off by default, as in PyTorch
  // since 1.12 for matmuls. Applied per run, process-wide (LibTorch's global context).
  bool allow_tf32 = false;
  DeviceChoice device = DeviceChoice::kAuto;
  // std::nullopt: on for fp16, off otherwise (bf16 has fp32's range and rarely needs one).
  std::optional<bool> use_scaler;
  ScalerConfig scaler;
  OptimConfig optim;
  int64_t steps = 100;              // optimizer steps (effective batches)
  int64_t batch_size = 32;          // samples per micro-batch
  int64_t accumulation_steps = 1;   // micro-batches per optimizer step
  double clip_grad_norm = 0.0;      // max total norm of the unscaled gradients; 0 = off
  uint64_t seed = 0;
  // A run whose loss scale keeps backing off (fp16) is declared diverged after
  // this many consecutive skipped steps.
  int64_t max_consecutive_skips = 50;
  // Validation every eval_every optimizer steps (0 = never): eval_batches batches of batch_size
  // in inference mode under the run's autocast, the same batches each time.
  int64_t eval_every = 0;
  int64_t eval_batches = 4;
  RecipeKind recipe = RecipeKind::kStandard;
  // Fault injection, to see (and test) the skip path: at each listed optimizer step one
  // element of the first gradient of the listed model (0 = A, 1 = B in multi-loss) is set to
  // +inf after the backward, before any unscale_, as an fp16 overflow would leave it.
  std::vector<InfInjection> inject_inf;

  bool scaler_enabled() const { return use_scaler.value_or(precision == Precision::kFP16); }
};

// Throws ConfigError with a one-line message when the settings are impossible or contradictory.
void validate(const TrainConfig& config);

std::string_view to_string(Precision p);
std::string_view to_string(DeviceChoice d);
std::string_view to_string(ModelKind m);
std::string_view to_string(DataKind d);
std::string_view to_string(OptimizerKind o);
std::string_view to_string(ScheduleKind s);
std::string_view to_string(AttentionKind a);
std::string_view to_string(RecipeKind r);

// Parse a name as the CLI and config files spell it; std::nullopt if unknown.
std::optional<Precision> parse_precision(std::string_view s);
std::optional<DeviceChoice> parse_device(std::string_view s);
std::optional<ModelKind> parse_model(std::string_view s);
std::optional<DataKind> parse_data(std::string_view s);
std::optional<OptimizerKind> parse_optimizer(std::string_view s);
std::optional<ScheduleKind> parse_schedule(std::string_view s);
std::optional<AttentionKind> parse_attention(std::string_view s);
std::optional<RecipeKind> parse_recipe(std::string_view s);

}  // namespace ampscope::engine
