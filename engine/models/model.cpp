#include "engine/models/model.h"

#include <fmt/format.h>

#include "engine/errors.h"
#include "engine/models/nn_model.h"
#include "engine/module_scope.h"

namespace ampscope::engine {

std::vector<at::Tensor> Model::parameters() {
  std::vector<at::Tensor> out;
  for (auto& [name, tensor] : named_parameters()) out.push_back(tensor);
  return out;
}

int64_t Model::parameter_count() { return models::count_parameters(named_parameters()); }

namespace {

// The prefix scope_name() puts before module paths while make_model builds a model. The
// models name their scopes in their constructors, several levels down; a construction-time
// setting spares every constructor a parameter only the multi-loss recipe uses.
thread_local std::string module_prefix_in_construction;

class ModulePrefixDuringConstruction {
 public:
  explicit ModulePrefixDuringConstruction(const std::string& prefix) { module_prefix_in_construction = prefix; }
  ~ModulePrefixDuringConstruction() { module_prefix_in_construction.clear(); }
};

std::unique_ptr<Model> build_model(const ModelConfig& config, const SampleSpec& spec) {
  if (config.layers < 0) {
    throw ModelError(fmt::format("model layers must be >= 0, got {}", config.layers));
  }
  if (config.width <= 0) {
    throw ModelError(fmt::format("model width must be > 0, got {}", config.width));
  }
  switch (config.kind) {
    case ModelKind::kMLP:
      return models::make_mlp(config, spec);
    case ModelKind::kConvNet:
      return models::make_convnet(config, spec);
    case ModelKind::kGPT:
      return models::make_gpt(config, spec);
    case ModelKind::kTorchScript:
      return models::make_torchscript(config, spec);
  }
  throw ModelError("unknown model kind");
}

}  // namespace

std::unique_ptr<Model> make_model(const ModelConfig& config, const SampleSpec& spec,
                                  const std::string& module_prefix) {
  const ModulePrefixDuringConstruction prefix(module_prefix);
  return build_model(config, spec);
}

double estimated_weight_bytes(const ModelConfig& config, const SampleSpec& spec) {
  // In double: absurd settings (--width 10000000000) must not overflow.
  const double w = static_cast<double>(config.width), layers = static_cast<double>(config.layers);
  const double classes = static_cast<double>(spec.num_classes);
  constexpr double kFloat = 4, kLong = 8;
  switch (config.kind) {
    case ModelKind::kMLP: {
      double in = 1;
      for (const int64_t d : spec.input_shape) in *= static_cast<double>(d);
      const double out = spec.task == TaskKind::kRegression ? static_cast<double>(spec.target_dim) : classes;
      if (config.layers == 0) return kFloat * (in * out + out);
      return kFloat * (in * w + w + (layers - 1) * (w * w + w) + w * out + out);
    }
    case ModelKind::kConvNet: {
      const double c = spec.input_shape.empty() ? 1 : static_cast<double>(spec.input_shape[0]);
      // 3x3 convolutions without bias; each BatchNorm has weight, bias, two running
      // statistics (floats) and a step count (int64).
      const double batch_norms = 1 + 2 * layers;
      return kFloat * (9 * c * w + layers * 18 * w * w + batch_norms * 4 * w + w * classes + classes) +
             kLong * batch_norms;
    }
    case ModelKind::kGPT: {
      const double t = static_cast<double>(config.seq_len);
      // Per block: two LayerNorms (4w), qkv (3w^2 + 3w), proj (w^2 + w), fc (4w^2 + 4w),
      // fc proj (4w^2 + w), and a [T, T] bool causal mask.
      const double block = 12 * w * w + 13 * w;
      const double head = config.tied_head ? 0 : classes * w;
      return kFloat * (classes * w + t * w + layers * block + 2 * w + head) + layers * t * t;
    }
    case ModelKind::kTorchScript: return 0;
  }
  return 0;
}

namespace models {

std::string scope_name(const std::string& path) {
  return kModuleScopePrefix + module_prefix_in_construction + path;
}

std::string child_path(const std::string& parent, const std::string& child) {
  return parent.empty() ? child : parent + "." + child;
}

std::string format_count(int64_t count) {
  if (count < 1000) return std::to_string(count);
  if (count < 1000000) return fmt::format("{:.1f}K", static_cast<double>(count) / 1e3);
  if (count < 1000000000) return fmt::format("{:.2f}M", static_cast<double>(count) / 1e6);
  return fmt::format("{:.2f}B", static_cast<double>(count) / 1e9);
}

std::vector<std::pair<std::string, at::Tensor>> trainable_parameters(
    const torch::nn::Module& module) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  std::unordered_set<const void*> seen;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    const at::Tensor& t = item.value();
    if (!t.defined() || !t.requires_grad()) continue;
    if (!seen.insert(t.unsafeGetTensorImpl()).second) continue;
    out.emplace_back(item.key(), t);
  }
  return out;
}

int64_t count_parameters(const std::vector<std::pair<std::string, at::Tensor>>& params) {
  int64_t n = 0;
  for (const auto& [name, t] : params) n += t.numel();
  return n;
}

}  // namespace models
}  // namespace ampscope::engine
