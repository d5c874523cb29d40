#include "engine/models/mlp.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <numeric>

#include "engine/errors.h"
#include "engine/models/nn_model.h"
#include "engine/module_scope.h"

namespace ampscope::engine::models {

MlpImpl::MlpImpl(int64_t in_features, int64_t layers, int64_t width, int64_t out_features)
    : in_features_(in_features) {
  hidden = register_module("hidden", torch::nn::ModuleList());
  int64_t fan_in = in_features;
  for (int64_t i = 0; i < layers; ++i) {
    hidden->push_back(torch::nn::Linear(fan_in, width));
    hidden_scopes_.push_back(scope_name(fmt::format("hidden.{}", i)));
    fan_in = width;
  }
  head = register_module("head", torch::nn::Linear(fan_in, out_features));
  head_scope_ = scope_name("head");
}

at::Tensor MlpImpl::forward(const at::Tensor& input) {
  if (input.dim() < 2 || input.numel() / std::max<int64_t>(input.size(0), 1) != in_features_) {
    throw ModelError(fmt::format("the MLP expects [B, ...] with {} features per sample, got {}",
                                 in_features_, fmt::join(input.sizes(), "x")));
  }
  at::Tensor x = input.flatten(1);
  for (size_t i = 0; i < hidden->size(); ++i) {
    ModuleScope scope(hidden_scopes_[i]);
    x = scope.output(at::relu(apply_linear(scope, *hidden[i]->as<torch::nn::Linear>(), scope.input(x))));
  }
  ModuleScope scope(head_scope_);
  return scope.output(apply_linear(scope, *head, scope.input(x)));
}

std::unique_ptr<Model> make_mlp(const ModelConfig& config, const SampleSpec& spec) {
  if (spec.task == TaskKind::kLanguageModel) {
    throw ModelError(
        "the MLP needs vector or image samples; the data gives token sequences: use --model gpt");
  }
  if (spec.input_shape.empty()) {
    throw ModelError("the MLP needs samples with a shape ({F} or {C, H, W}); the data gives none");
  }
  const int64_t in_features = std::accumulate(spec.input_shape.begin(), spec.input_shape.end(),
                                              int64_t{1}, std::multiplies<>());
  const bool regression = spec.task == TaskKind::kRegression;
  const int64_t out = regression ? spec.target_dim : spec.num_classes;
  if (in_features <= 0 || out <= 0) {
    throw ModelError(fmt::format("the MLP needs positive sizes; the data gives {} features, {} {}",
                                 in_features, out, regression ? "targets" : "classes"));
  }
  auto module = std::make_shared<MlpImpl>(in_features, config.layers, config.width, out);
  return std::make_unique<NnModel<MlpImpl>>(module, [&](int64_t params) {
    return fmt::format("MLP {} -> {}x{} -> {} ({} params)", in_features, config.layers,
                       config.width, out, format_count(params));
  });
}

}  // namespace ampscope::engine::models
