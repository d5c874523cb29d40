#pragma once
// A multilayer perceptron for vectors and images (flattened): `layers` hidden
// Linear+ReLU of `width` units, then a Linear head to classes or regression targets.
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>

#include <string>
#include <vector>

namespace ampscope::engine::models {

class MlpImpl : public torch::nn::Module {
 public:
  MlpImpl(int64_t in_features, int64_t layers, int64_t width, int64_t out_features);
  // [B, ...] -> [B, out_features]; everything after the batch dimension is flattened.
  at::Tensor forward(const at::Tensor& input);

  torch::nn::ModuleList hidden;  // "hidden.<i>": Linear(in or width -> width), ReLU after each
  torch::nn::Linear head{nullptr};

 private:
  int64_t in_features_;
  std::vector<std::string> hidden_scopes_;
  std::string head_scope_;
};

}  // namespace ampscope::engine::models
