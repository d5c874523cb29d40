#include "profiler/capture/readiness_recorder.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "engine/module_scope.h"
#include "profiler/capture/batched_pass.h"
#include "profiler/capture/own_work.h"
#include "profiler/capture/quantization_sim.h"

namespace ampscope::profiler {
namespace {

// Inputs waiting in the forward before they are measured: about one pass's worth of
// the elements measured, so the references held (and the pass's buffers) stay bounded
// whatever the model.
constexpr int64_t kWaitingElements = int64_t{1} << 24;

// A tensor is measured on at most this many elements (evenly spaced rows; the
// tensorwise scales still from all of it). A pass costs some 280 launches whatever it
// holds, and at the pass's own 2^24 each large activation was a pass of its own: an
// H200's ResNet-50 sample ran 42 passes, 452 ms on the training thread. At 2^21 eight
// such tensors share a pass, and a share of one in a thousand (flushed, saturated)
// still rests on some 2,000 elements. Weights and their gradients too: GPT-2's tied
// embedding (50,257 x 768) and its gradient filled a pass each (at its 2^24 bound).
constexpr int64_t kTensorSampleElements = int64_t{1} << 21;

// The layer a GEMM weight parameter belongs to, by its name: "<layer>.weight" (Linear,
// convolutions, Conv1D), and nn.MultiheadAttention's own projection weights, which the Python
// capture names as layers as it sees them multiplied ("attn.in_proj_weight" is "attn.in_proj";
// q/k/v_proj_weight likewise); "" for any other parameter.
std::string_view layer_of_weight(std::string_view name) {
  if (name.ends_with(".weight")) return name.substr(0, name.size() - std::string_view(".weight").size());
  if (name.ends_with("_proj_weight")) return name.substr(0, name.size() - std::string_view("_weight").size());
  return {};
}

bool measurable(const at::Tensor& t) {
  return t.defined() && t.is_floating_point() && !t.is_sparse() && t.numel() > 0 && holds_data(t);
}

}  // namespace

at::Tensor ReadinessRecorder::out_by_in(const at::Tensor& t, bool in_by_out) {
  return in_by_out && t.dim() == 2 ? t.t() : t;
}

bool ReadinessRecorder::noted_in_by_out(const at::Tensor& weight) const {
  const auto noted = in_by_out_.find(weight.unsafeGetTensorImpl());
  return noted != in_by_out_.end() && noted->second.lock().get() == weight.unsafeGetTensorImpl();
}

void ReadinessRecorder::note_gemm_weight(std::string layer, const at::Tensor& weight) {
  if (!weight.defined()) return;
  gemm_weights_.insert_or_assign(weight.unsafeGetTensorImpl(),
                                 NotedWeight{c10::weak_intrusive_ptr<c10::TensorImpl>(weight.getIntrusivePtr()),
                                             std::move(layer)});
}

size_t ReadinessRecorder::layer_index(std::string_view name, const at::Tensor& weight) {
  if (name.starts_with(engine::kModuleScopePrefix)) name.remove_prefix(std::string_view(engine::kModuleScopePrefix).size());
  auto [it, added] = by_name_.try_emplace(std::string(name), layers_.size());
  if (added) {
    layers_.push_back({std::string(name), weight, noted_in_by_out(weight), false});
    // A weight shared by two layers (a tied head) is matched to its gradient once, by the first.
    by_weight_.try_emplace(weight.unsafeGetTensorImpl(), it->second);
  }
  return it->second;
}

void ReadinessRecorder::wait(size_t layer, TensorRole role, at::Tensor matrix) {
  waiting_elements_ += std::min(matrix.numel(), kTensorSampleElements);
  waiting_.push_back({layer, role, std::move(matrix)});
}

void ReadinessRecorder::on_layer_input(std::string_view layer, const at::Tensor& input, const at::Tensor& weight) {
  if (!measurable(input) || !measurable(weight)) return;
  at::NoGradGuard no_grad;
  // The profiler's own work, inside the user's traced forward: not the user's ops or kernels.
  OwnWork own(source_);
  const size_t index = layer_index(layer, weight);
  inputs_seen_ = true;
  wait(index, TensorRole::input_activation,
       scaling_matrix(input, TensorRole::input_activation, /*channels_first=*/weight.dim() > 2));
  if (waiting_elements_ >= kWaitingElements) run_pass();
}

void ReadinessRecorder::note_in_by_out(const at::Tensor& weight) {
  if (weight.defined() && weight.dim() == 2)
    in_by_out_.insert_or_assign(weight.unsafeGetTensorImpl(),
                                c10::weak_intrusive_ptr<c10::TensorImpl>(weight.getIntrusivePtr()));
}

void ReadinessRecorder::measure_gradients(const engine::NamedTensors& parameters) {
  at::NoGradGuard no_grad;
  OwnWork own(source_);
  if (!inputs_seen_) {
    for (const auto& [name, p] : parameters) {
      if (p.dim() < 2 || !measurable(p)) continue;
      if (gemm_weights_.empty()) {
        if (const std::string_view layer = layer_of_weight(name); !layer.empty()) layer_index(layer, p);
        continue;
      }
      // The model's GEMM weights as mapped: not an embedding (position embeddings), and a
      // tied head under its own name, not the embedding's the optimizer gives it.
      const auto noted = gemm_weights_.find(p.unsafeGetTensorImpl());
      if (noted != gemm_weights_.end() && noted->second.tensor.lock().get() == p.unsafeGetTensorImpl())
        layer_index(noted->second.layer, p);
    }
  }
  for (const auto& [name, p] : parameters) {
    std::optional<size_t> index;
    if (const auto it = by_weight_.find(p.unsafeGetTensorImpl()); it != by_weight_.end()) {
      index = it->second;
    } else if (const std::string_view layer = layer_of_weight(name); !layer.empty()) {
      // A weight the forward did not see as this tensor: FSDP's, whose forward multiplied the
      // parameter gathered from the shards, in param_dtype. The shard the optimizer holds is
      // found by its name ("1.up.weight" for layer "1.up").
      const auto named = by_name_.find(std::string(layer));
      if (named != by_name_.end()) index = named->second;
    }
    if (!index || !measurable(p)) continue;
    Layer& layer = layers_[*index];
    if (layer.weight_measured) continue;
    layer.weight_measured = true;
    wait(*index, TensorRole::weight, scaling_matrix(out_by_in(p, layer.in_by_out), TensorRole::weight));
    if (measurable(p.grad()))
      wait(*index, TensorRole::weight_gradient,
           scaling_matrix(out_by_in(p.grad(), layer.in_by_out), TensorRole::weight_gradient));
  }
  run_pass();
}

void ReadinessRecorder::run_pass() {
  if (waiting_.empty()) return;
  std::vector<at::Tensor> matrices;
  matrices.reserve(waiting_.size());
  for (const Waiting& w : waiting_) matrices.push_back(w.matrix);
  const std::vector<int64_t> sample_elements(matrices.size(), kTensorSampleElements);
  QuantizationSums sums = quantization_sums(matrices, sample_elements);
  passes_ += sums.passes;
  for (size_t i = 0; i < waiting_.size(); ++i) measured_.push_back({waiting_[i].layer, waiting_[i].role, sums.elements[i]});
  // Layers on several devices: every pass's sums to the first's, for the one transfer.
  sums_.push_back(sums_.empty() ? sums.sums : sums.sums.to(sums_.front().device()));
  waiting_.clear();
  waiting_elements_ = 0;
}

std::vector<ReadinessSample> ReadinessRecorder::take(int64_t step) {
  std::vector<ReadinessSample> out;
  if (layers_.empty()) return out;
  {
    at::NoGradGuard no_grad;
    OwnWork own(source_);
    // Weights no optimizer handed over with a gradient (frozen layers), as they are now.
    // (Not one FSDP gathered for the forward and has freed since: no data left to read.)
    for (size_t i = 0; i < layers_.size(); ++i)
      if (!layers_[i].weight_measured && measurable(layers_[i].weight))
        wait(i, TensorRole::weight, scaling_matrix(out_by_in(layers_[i].weight, layers_[i].in_by_out), TensorRole::weight));
    run_pass();
    const at::Tensor host = at::cat(sums_).cpu().contiguous();  // the one transfer
    const double* rows = host.const_data_ptr<double>();
    // One sample per layer and tensor: a layer called more than once (micro-batches) adds up.
    std::map<std::pair<size_t, TensorRole>, ReadinessSample> samples;
    for (size_t row = 0; row < measured_.size(); ++row) {
      const Measured& m = measured_[row];
      const auto metrics = read_quantization_sums(rows + row * kQuantFormatCount * kQuantSumColumns, m.elements);
      auto [it, added] = samples.try_emplace({m.layer, m.role});
      ReadinessSample& s = it->second;
      if (added) {
        s.step = step;
        s.layer = layers_[m.layer].name;
        s.tensor = {m.role, metrics};
      } else {
        for (int f = 0; f < kQuantFormatCount; ++f) s.tensor.formats[f].merge(metrics[f]);
      }
    }
    out.reserve(samples.size());
    for (auto& [key, sample] : samples) out.push_back(std::move(sample));  // layer order, then role
  }
  last_sample_passes_ = passes_;
  discard();
  return out;
}

void ReadinessRecorder::discard() {
  layers_.clear();
  by_name_.clear();
  by_weight_.clear();
  waiting_.clear();
  waiting_elements_ = 0;
  sums_.clear();
  measured_.clear();
  inputs_seen_ = false;
  passes_ = 0;
}

}  // namespace ampscope::profiler
