#pragma once
// Precision readiness on gradient-sampled steps (issue #30): the Linear and
// convolution layers' weights, inputs and weight gradients through the simulated
// formats (quantization_sim.h), batched, as the profiler's own work (own_work.h:
// not the user's ops, not in the GPU trace). Training thread only.
//
// On a sampled step:
//  - forward: on_layer_input keeps each layer's input and weight (references, no
//    copy); once a pass's worth of inputs waits they are measured, so what it
//    holds stays bounded;
//  - after the backward: measure_gradients measures the layers' weights, their
//    unscaled gradients and the inputs still waiting, in one batched pass, no sync;
//  - step end: take() measures what is left (weights no optimizer handed over:
//    frozen layers), brings every sum back in one transfer, and clears.
//
// The third operand of a layer's backward GEMMs, the gradient of its output, is
// not seen: the weight's gradient stands in for it (TensorRole::weight_gradient).
#include <ATen/core/Tensor.h>
#include <c10/util/intrusive_ptr.h>

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/training_observer.h"
#include "profiler/analysis/quantization_readiness.h"
#include "profiler/cupti/activity_source.h"

namespace ampscope::profiler {

class ReadinessRecorder {
 public:
  // The GPU tracer its work is bracketed in as the profiler's own.
  void set_activity_source(cupti::ActivitySource* source) { source_ = source; }

  // A layer's input and weight just before its GEMM (`layer`: its module path, or
  // its scope name "ampscope.module:<path>"). A weight with more than two
  // dimensions is a convolution's: the input's channels (dimension 1) are then
  // what its GEMM reduces over.
  void on_layer_input(std::string_view layer, const at::Tensor& input, const at::Tensor& weight);
  // A weight held [in, out] (transformers' Conv1D, GPT-2's attention and MLP layers:
  // x @ W) where [out, in, ...] is the rule (torch.nn.Linear, convolutions); the Python
  // capture notes them when it maps a model, before any forward. Such a weight and its
  // gradient are measured as the [out, in] matrix the GEMM reduces along (blocks and
  // rowwise scales along the reduction dimension), whether or not layer inputs are
  // seen (compiled code shows none). Kept across samples; holds no reference.
  void note_in_by_out(const at::Tensor& weight);
  // A GEMM layer's weight under its layer's name, as the Python capture maps a model
  // ("lm_head" for a head tied to the token embedding, "attn.in_proj" for a
  // MultiheadAttention's in_proj_weight). Kept across samples; holds no reference.
  void note_gemm_weight(std::string layer, const at::Tensor& weight);
  // `parameters`: (name, parameter) pairs whose .grad() holds the unscaled
  // gradient (TrainingObserver::on_unscaled_gradients). The layers are those
  // whose input was seen this step; when none was (a TorchScript model, compiled
  // code), the weights note_gemm_weight noted, under its names, or where none were
  // noted (the built-in engine), every parameter named <layer>.weight with two or
  // more dimensions (embeddings too: nothing tells them apart there).
  void measure_gradients(const engine::NamedTensors& parameters);
  // The step's samples, per layer in the order first seen and per tensor, micro-
  // batches added up; clears.
  std::vector<ReadinessSample> take(int64_t step);
  void discard();
  bool empty() const { return layers_.empty(); }
  // The batched passes the last take()'s sample ran (its cost is per pass, not per layer).
  int64_t last_sample_passes() const { return last_sample_passes_; }

 private:
  struct Layer {
    std::string name;
    at::Tensor weight;  // the parameter itself (its .grad() is read later)
    bool in_by_out = false;  // note_in_by_out's
    bool weight_measured = false;
  };
  struct Waiting {
    size_t layer;
    TensorRole role;
    at::Tensor matrix;  // scaling_matrix of the tensor
  };
  struct Measured {
    size_t layer;
    TensorRole role;
    int64_t elements;
  };

  size_t layer_index(std::string_view name, const at::Tensor& weight);
  // Whether note_in_by_out noted this very tensor (not one freed since at its address).
  bool noted_in_by_out(const at::Tensor& weight) const;
  // The layer's weight or its gradient as [out, in, ...].
  static at::Tensor out_by_in(const at::Tensor& t, bool in_by_out);
  void wait(size_t layer, TensorRole role, at::Tensor matrix);
  // The waiting tensors through one batched pass; their sums stay on the device.
  void run_pass();

  std::vector<Layer> layers_;
  std::unordered_map<std::string, size_t> by_name_;
  std::unordered_map<const void*, size_t> by_weight_;  // TensorImpl of a layer's weight
  std::unordered_map<const void*, c10::weak_intrusive_ptr<c10::TensorImpl>> in_by_out_;  // note_in_by_out's
  struct NotedWeight {
    c10::weak_intrusive_ptr<c10::TensorImpl> tensor;
    std::string layer;
  };
  std::unordered_map<const void*, NotedWeight> gemm_weights_;  // note_gemm_weight's
  std::vector<Waiting> waiting_;
  int64_t waiting_elements_ = 0;
  std::vector<at::Tensor> sums_;  // one [tensors, formats, columns] tensor per pass, on one device
  std::vector<Measured> measured_;  // the rows of sums_, in order
  bool inputs_seen_ = false;        // else the layers are the parameters named *.weight
  int64_t passes_ = 0, last_sample_passes_ = 0;
  cupti::ActivitySource* source_ = nullptr;
};

}  // namespace ampscope::profiler
