#include "profiler/analysis/flop_count.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "profiler/analysis/op_family.h"

namespace ampscope::profiler {
namespace {

double product(const Shape& s, size_t begin, size_t end) {
  double p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= static_cast<double>(s[i]);
  return p;
}

double gemm_flops(double batch, double m, double n, double k) { return 2.0 * batch * m * n * k; }

double matmul_flops(const Shape& a, const Shape& b) {
  // 1-D operands are a row (a) or a column (b) vector, as torch.matmul treats them.
  const double m = a.size() >= 2 ? static_cast<double>(a[a.size() - 2]) : 1.0;
  const double k = static_cast<double>(a.back());
  const double n = b.size() >= 2 ? static_cast<double>(b.back()) : 1.0;
  // Broadcast batch: the larger of each aligned pair of leading dimensions.
  const size_t a_batch = a.size() > 2 ? a.size() - 2 : 0;
  const size_t b_batch = b.size() > 2 ? b.size() - 2 : 0;
  double batch = 1;
  for (size_t i = 0; i < std::max(a_batch, b_batch); ++i) {
    const int64_t da = i < a_batch ? a[a_batch - 1 - i] : 1;
    const int64_t db = i < b_batch ? b[b_batch - 1 - i] : 1;
    batch *= static_cast<double>(std::max(da, db));
  }
  return gemm_flops(batch, m, n, k);
}

// A non-transposed convolution: every output element is a dot product of length
// C/groups x kernel size. The output's spatial extents are those of
// `out_spatial_source` from index `spatial_begin` on.
double conv_flops(const Shape& x, const Shape& w, const Shape& out_spatial_source,
                  size_t spatial_begin) {
  if (x.size() < 3 || w.size() != x.size()) return 0;
  const double out_elements = static_cast<double>(x[0]) * static_cast<double>(w[0]) *
                              product(out_spatial_source, spatial_begin, out_spatial_source.size());
  return 2.0 * out_elements * product(w, 1, w.size());
}

// Attention as two batched GEMMs: scores = q k^T and out = softmax(scores) v.
struct AttentionDims {
  double batch = 0, sq = 0, sk = 0, e = 0, ev = 0;
};

std::optional<AttentionDims> attention_dims(const std::vector<Shape>& shapes, size_t first) {
  const Shape* q = shape_at(shapes, first);
  const Shape* k = shape_at(shapes, first + 1);
  const Shape* v = shape_at(shapes, first + 2);
  if (q == nullptr || k == nullptr || v == nullptr || q->size() < 2 || k->size() < 2 ||
      v->size() < 2) {
    return std::nullopt;
  }
  return AttentionDims{product(*q, 0, q->size() - 2), static_cast<double>((*q)[q->size() - 2]),
                       static_cast<double>((*k)[k->size() - 2]), static_cast<double>(q->back()),
                       static_cast<double>(v->back())};
}

// `conv_out` overrides a forward convolution's output shape when it is known.
double flops_of(OpFamily f, const std::vector<Shape>& shapes, const Shape* conv_out) {
  size_t a_index = 0, b_index = 1;
  if (f == OpFamily::kAddmm || f == OpFamily::kBaddbmm) a_index = 1, b_index = 2;
  const Shape* a = shape_at(shapes, a_index);
  const Shape* b = shape_at(shapes, b_index);
  switch (f) {
    case OpFamily::kNone:
      return 0;
    case OpFamily::kMm:
    case OpFamily::kScaledMm:
    case OpFamily::kAddmm:
      if (a == nullptr || b == nullptr || a->size() != 2 || b->size() != 2) return 0;
      return gemm_flops(1, (*a)[0], (*b)[1], (*a)[1]);
    case OpFamily::kBmm:
    case OpFamily::kBaddbmm:
      if (a == nullptr || b == nullptr || a->size() != 3 || b->size() != 3) return 0;
      return gemm_flops((*a)[0], (*a)[1], (*b)[2], (*a)[2]);
    case OpFamily::kMatmul:
      if (a == nullptr || b == nullptr) return 0;
      return matmul_flops(*a, *b);
    case OpFamily::kLinear:
      if (a == nullptr || b == nullptr || b->size() != 2) return 0;
      return gemm_flops(1, product(*a, 0, a->size() - 1), (*b)[0], a->back());
    case OpFamily::kConv:
      if (a == nullptr || b == nullptr) return 0;
      // Without the output shape, assume stride 1 and 'same' padding: output
      // spatial = input spatial (an overestimate for strided convolutions).
      return conv_out != nullptr ? conv_flops(*a, *b, *conv_out, 2) : conv_flops(*a, *b, *a, 2);
    case OpFamily::kConvTranspose:
      // Each input element scatters into C_out/groups x kernel outputs, so the
      // input's spatial size decides the work: exact without the output shape.
      if (a == nullptr || b == nullptr || a->size() < 3 || b->size() != a->size()) return 0;
      return 2.0 * static_cast<double>((*a)[0]) * product(*a, 2, a->size()) *
             product(*b, 0, b->size());
    case OpFamily::kConvBackward: {
      // grad_input and grad_weight each cost one forward pass; see flops_per_step
      // for when only one of them was computed.
      const Shape* grad_out = shape_at(shapes, 0);
      const Shape* x = shape_at(shapes, 1);
      const Shape* w = shape_at(shapes, 2);
      if (grad_out == nullptr || x == nullptr || w == nullptr) return 0;
      return 2.0 * conv_flops(*x, *w, *grad_out, 2);
    }
    case OpFamily::kAttention: {
      const auto d = attention_dims(shapes, 0);
      if (!d) return 0;
      return gemm_flops(d->batch, d->sq, d->sk, d->e) + gemm_flops(d->batch, d->sq, d->ev, d->sk);
    }
    case OpFamily::kAttentionBackward: {
      // Recompute scores (q k^T), then grad_v, grad_scores, grad_q and grad_k:
      // five GEMMs, as torch.utils.flop_counter counts them (2.5x forward when E == Ev).
      const auto d = attention_dims(shapes, 1);
      if (!d) return 0;
      return gemm_flops(d->batch, d->sq, d->sk, 3 * d->e + 2 * d->ev);
    }
  }
  return 0;
}

// How many of grad_input / grad_weight a convolution_backward row computed. The
// output_mask argument is not a tensor, so it is not recorded; the outputs are:
// undefined gradients (the network's input, frozen weights, no bias) leave no
// output dtype. 3 outputs = input + weight + bias; 2 is taken as input + weight
// (bias-free convolutions before a norm layer are the common case); 1 is a
// single gradient. Nothing recorded: assume both.
double conv_backward_gemms(const OpStats& row) { return row.output_dtypes.size() == 1 ? 1 : 2; }

using ConvKey = std::tuple<std::string, Shape, Shape>;  // module, input shape, weight shape

// Forward convolutions' output shapes, from the grad_output of convolution_backward rows.
class ConvOutputs {
 public:
  explicit ConvOutputs(const std::vector<OpStats>& rows) {
    for (const OpStats& row : rows) {
      if (op_family(row.name) != OpFamily::kConvBackward) continue;
      const Shape* grad_out = shape_at(row.input_shapes, 0);
      const Shape* x = shape_at(row.input_shapes, 1);
      const Shape* w = shape_at(row.input_shapes, 2);
      if (grad_out == nullptr || x == nullptr || w == nullptr) continue;
      by_module_.emplace(ConvKey{row.module, *x, *w}, *grad_out);
      auto [it, added] = by_shapes_.emplace(ConvKey{"", *x, *w}, *grad_out);
      if (!added && it->second != *grad_out) ambiguous_.insert(it->first);
    }
  }

  // The same module's backward row; failing that (a backward row may lack its
  // module), the only output shape seen for these operand shapes.
  const Shape* find(const OpStats& forward) const {
    const Shape* x = shape_at(forward.input_shapes, 0);
    const Shape* w = shape_at(forward.input_shapes, 1);
    if (x == nullptr || w == nullptr) return nullptr;
    if (auto it = by_module_.find(ConvKey{forward.module, *x, *w}); it != by_module_.end()) {
      return &it->second;
    }
    const ConvKey key{"", *x, *w};
    if (auto it = by_shapes_.find(key); it != by_shapes_.end() && !ambiguous_.count(key)) {
      return &it->second;
    }
    return nullptr;
  }

 private:
  std::map<ConvKey, Shape> by_module_, by_shapes_;
  std::set<ConvKey> ambiguous_;  // operand shapes seen with different output shapes (strides)
};

}  // namespace

double op_flops(const std::string& name, const std::vector<Shape>& input_shapes) {
  return flops_of(op_family(name), input_shapes, nullptr);
}

double flops_per_step(const std::vector<OpStats>& rows, int64_t profiled_steps) {
  if (profiled_steps <= 0) return 0;
  const ConvOutputs conv_outputs(rows);
  double total = 0;
  for (const OpStats& row : rows) {
    if (row.calls <= 0 || !is_leaf_compute_op(row.name)) continue;
    const OpFamily f = op_family(row.name);
    double per_call = 0;
    if (f == OpFamily::kConv) {
      per_call = flops_of(f, row.input_shapes, conv_outputs.find(row));
    } else if (f == OpFamily::kConvBackward) {
      per_call = flops_of(f, row.input_shapes, nullptr) / 2 * conv_backward_gemms(row);
    } else {
      per_call = flops_of(f, row.input_shapes, nullptr);
    }
    total += per_call * static_cast<double>(row.calls);
  }
  return total / static_cast<double>(profiled_steps);
}

}  // namespace ampscope::profiler
