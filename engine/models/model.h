#pragma once
// The models ampscope trains. A Model hides whether it is a torch::nn::Module
// (the built-ins) or a torch::jit::Module (a user's TorchScript file).
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/config.h"
#include "engine/data/data_source.h"

namespace ampscope::engine {

class Model {
 public:
  virtual ~Model() = default;
  // Logits [B, C] (classification), [B, T, V] (language model) or values [B, K] (regression).
  virtual at::Tensor forward(const at::Tensor& input) = 0;
  // Dotted names as torch.nn.Module.named_parameters() gives them; only trainable ones.
  virtual std::vector<std::pair<std::string, at::Tensor>> named_parameters() = 0;
  virtual void to(c10::Device device) = 0;
  virtual void set_training(bool training) = 0;
  virtual std::string description() const = 0;  // e.g. "GPT 2 blocks, d=128, 4 heads, T=64 (0.4M params)"

  std::vector<at::Tensor> parameters();
  int64_t parameter_count();
};

// Builds the model a config asks for, shaped for the data. Throws ModelError when
// the model cannot take this data (a GPT on images) or a file cannot be loaded.
// `module_prefix` ("model_b.") goes before every module path the model's scopes record, so
// two models of one run (the multi-loss recipe) stay apart in the op table.
std::unique_ptr<Model> make_model(const ModelConfig& config, const SampleSpec& spec,
                                  const std::string& module_prefix = {});

}  // namespace ampscope::engine
