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

// Bytes of parameters and buffers make_model will allocate for a built-in model, from the
// settings alone (0 for TorchScript, whose size is the file's): lets a run refuse a model
// too big for memory before building it. A deep model is built from many small
// allocations that each succeed, until the kernel's OOM killer ends the process.
// tests/models/test_models_memory.cpp holds it to the built models' real sizes.
double estimated_weight_bytes(const ModelConfig& config, const SampleSpec& spec);

}  // namespace ampscope::engine
