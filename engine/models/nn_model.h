#pragma once
// Shared plumbing for the built-in models: a Model that owns a torch::nn::Module,
// and the helpers their constructors and descriptions use. Internal to engine/models.
#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/models/model.h"
#include "engine/module_scope.h"

namespace ampscope::engine::models {

// A Linear layer applied as Python's nn.Linear applies it: one aten::linear op.
// LibTorch's LinearImpl::forward decomposes it (t + matmul + add_), which
// autocast and profilers would then see as different ops than in PyTorch.
// `scope` is the layer's own: an activation sink sees its input with its weight.
inline at::Tensor apply_linear(const ModuleScope& scope, const torch::nn::LinearImpl& layer, const at::Tensor& x) {
  return at::linear(scope.layer_input(x, layer.weight), layer.weight, layer.bias);
}

// "ampscope.module:<path>", the RecordFunction name of a module scope.
std::string scope_name(const std::string& path);

// Joins a parent path and a child name the way PyTorch's dotted names do ("" + "head" = "head").
std::string child_path(const std::string& parent, const std::string& child);

// 812 -> "812", 41234 -> "41.2K", 1234567 -> "1.23M": for one-line descriptions.
std::string format_count(int64_t count);

// Trainable parameters of a module, each tensor once even when it is registered under two
// names (a tied weight keeps its first name, as torch.nn.Module.named_parameters does).
std::vector<std::pair<std::string, at::Tensor>> trainable_parameters(
    const torch::nn::Module& module);

int64_t count_parameters(const std::vector<std::pair<std::string, at::Tensor>>& params);

// Module must have `at::Tensor forward(const at::Tensor&)`.
template <typename Module>
class NnModel final : public Model {
 public:
  // `describe` gets the parameter count and returns the description line.
  template <typename Describe>
  NnModel(std::shared_ptr<Module> module, Describe describe) : module_(std::move(module)) {
    description_ = describe(count_parameters(trainable_parameters(*module_)));
  }

  at::Tensor forward(const at::Tensor& input) override { return module_->forward(input); }
  std::vector<std::pair<std::string, at::Tensor>> named_parameters() override {
    return trainable_parameters(*module_);
  }
  void to(c10::Device device) override { module_->to(device); }
  void set_training(bool training) override { module_->train(training); }
  std::string description() const override { return description_; }

  Module& module() { return *module_; }

 private:
  std::shared_ptr<Module> module_;
  std::string description_;
};

std::unique_ptr<Model> make_mlp(const ModelConfig& config, const SampleSpec& spec);
std::unique_ptr<Model> make_convnet(const ModelConfig& config, const SampleSpec& spec);
std::unique_ptr<Model> make_gpt(const ModelConfig& config, const SampleSpec& spec);
std::unique_ptr<Model> make_torchscript(const ModelConfig& config, const SampleSpec& spec);

}  // namespace ampscope::engine::models
