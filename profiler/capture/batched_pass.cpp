#include "profiler/capture/batched_pass.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <c10/core/TensorImpl.h>

#include <algorithm>
#include <optional>
#include <utility>

namespace ampscope::profiler {
namespace {

// On the CPU one loop copies and widens the members (at::cat's CPU kernel copies
// input by input, an op each, once the result is large).
template <typename dst_t>
void copy_end_to_end(const std::vector<PassMember>& members, dst_t* dst) {
  for (const PassMember& m : members) {
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, m.flat.scalar_type(), "batched_pass_copy", [&] {
      const scalar_t* src = m.flat.const_data_ptr<scalar_t>();
      at::parallel_for(0, m.flat.numel(), at::internal::GRAIN_SIZE, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) dst[i] = static_cast<dst_t>(src[i]);
      });
    });
    dst += m.flat.numel();
  }
}

// The members end to end in `dtype`. Elsewhere than on the CPU at::cat of
// same-dtype inputs is one kernel for many inputs: one cat per dtype (PassPlanner
// grouped them).
at::Tensor concatenate(const std::vector<PassMember>& members, int64_t total, at::ScalarType dtype) {
  const at::Device device = members.front().flat.device();
  if (device.is_cpu()) {
    at::Tensor out = at::empty({total}, at::TensorOptions(dtype));
    if (dtype == at::kDouble) {
      copy_end_to_end(members, out.mutable_data_ptr<double>());
    } else {
      TORCH_CHECK(dtype == at::kFloat, "a batched pass is float32 or float64");
      copy_end_to_end(members, out.mutable_data_ptr<float>());
    }
    return out;
  }
  std::vector<at::Tensor> by_dtype;
  for (size_t i = 0; i < members.size();) {
    size_t j = i;
    std::vector<at::Tensor> same;
    for (; j < members.size() && members[j].flat.scalar_type() == members[i].flat.scalar_type(); ++j)
      same.push_back(members[j].flat);
    by_dtype.push_back(at::cat(same).to(dtype));
    i = j;
  }
  return by_dtype.size() == 1 ? by_dtype.front() : at::cat(by_dtype);
}

at::Tensor to_device(at::Tensor host, at::Device device) {
  if (device.is_cpu()) return host;
  if (device.is_cuda()) return host.pin_memory().to(device, /*non_blocking=*/true);
  return host.to(device);
}

}  // namespace

bool widened_on_the_cpu(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 || t == at::kFloat || t == at::kDouble;
}

at::Tensor host_values_on(const std::vector<int64_t>& values, at::Device device) {
  return to_device(at::tensor(values, at::kLong), device);
}

at::Tensor host_values_on(const std::vector<double>& values, at::ScalarType dtype, at::Device device) {
  return to_device(at::tensor(values, at::kDouble).to(dtype), device);
}

at::Tensor flat_elements(const at::Tensor& t) {
  const at::Tensor dense = t.is_non_overlapping_and_dense() ? t : t.contiguous();
  auto impl = c10::make_intrusive<c10::TensorImpl>(c10::TensorImpl::VIEW, c10::Storage(dense.storage()),
                                                   dense.key_set(), dense.dtype());
  const int64_t size = dense.numel(), stride = 1;
  impl->set_sizes_and_strides(c10::IntArrayRef(size), c10::IntArrayRef(stride), dense.storage_offset());
  return at::Tensor(std::move(impl));
}

void PassPlanner::add(size_t slot, at::Tensor flat) {
  const int64_t n = flat.numel();
  if (passes_.empty() || passes_.back().front().flat.device() != flat.device() || elements_ + n > kPassElements) {
    passes_.emplace_back();
    elements_ = 0;
  }
  passes_.back().push_back({slot, std::move(flat)});
  elements_ += n;
}

std::vector<std::vector<PassMember>> PassPlanner::take() {
  for (auto& pass : passes_)
    if (!pass.front().flat.device().is_cpu())
      std::stable_sort(pass.begin(), pass.end(), [](const PassMember& x, const PassMember& y) {
        return x.flat.scalar_type() < y.flat.scalar_type();
      });
  elements_ = 0;
  return std::exchange(passes_, {});
}

SegmentLengths::SegmentLengths(const std::vector<int64_t>& lengths, at::Device device) : host_lengths_(lengths) {
  std::vector<int64_t> pieces, pieces_per_segment;
  pieces_per_segment.reserve(lengths.size());
  bool cut = false;
  for (const int64_t n : lengths) {
    const int64_t count = std::max<int64_t>(1, (n + kSegmentPiece - 1) / kSegmentPiece);
    cut = cut || count > 1;
    pieces_per_segment.push_back(count);
    for (int64_t k = 0; k < count; ++k) pieces.push_back(std::min(kSegmentPiece, n - k * kSegmentPiece));
  }
  lengths_ = host_values_on(lengths, device);
  if (cut) {
    pieces_ = host_values_on(pieces, device);
    pieces_per_segment_ = host_values_on(pieces_per_segment, device);
  }
}

at::Tensor SegmentLengths::reduce(const at::Tensor& values, std::string_view how) const {
  TORCH_CHECK(values.dim() == 1, "SegmentLengths::reduce: 1-D values only");
  const auto reduced = [&](const at::Tensor& v, const at::Tensor& lengths) {
    return at::segment_reduce(v, how, lengths, std::nullopt, std::nullopt, 0, /*unsafe=*/true);
  };
  if (!pieces_.defined()) return reduced(values, lengths_);
  return reduced(reduced(values, pieces_), pieces_per_segment_);
}

at::Tensor SegmentLengths::segment_of_each_element(int64_t total) const {
  const std::optional<int64_t> size(total);  // given: no host sync
  if (!pieces_.defined()) return at::repeat_interleave(lengths_, size);
  const at::Tensor segment_of_piece = at::repeat_interleave(pieces_per_segment_, std::optional<int64_t>(pieces_.size(0)));
  return at::repeat_interleave(segment_of_piece, pieces_, 0, size);
}

Segments::Segments(const std::vector<PassMember>& members, at::ScalarType dtype) {
  std::vector<int64_t> lengths;
  lengths.reserve(members.size());
  for (const PassMember& m : members) {
    lengths.push_back(m.flat.numel());
    total_ += m.flat.numel();
  }
  values_ = concatenate(members, total_, dtype);
  segments_ = SegmentLengths(lengths, values_.device());
}

at::Tensor Segments::reduce(const at::Tensor& values, std::string_view how) const { return segments_.reduce(values, how); }

at::Tensor Segments::count_true(const at::Tensor& mask) const { return reduce(mask.to(at::kDouble), "sum"); }

const at::Tensor& Segments::member_of_each_element() const {
  if (!member_of_element_.defined()) member_of_element_ = segments_.segment_of_each_element(total_);
  return member_of_element_;
}

at::Tensor Segments::histogram(const at::Tensor& bin, int64_t bins, int64_t lanes) const {
  if (lanes <= 0) lanes = values_.device().is_cpu() ? 1 : kHistogramLanes;
  const at::TensorOptions doubles = values_.options().dtype(at::kDouble);
  at::Tensor index = member_of_each_element() * bins + bin;
  if (lanes > 1) index = index * lanes + at::arange(total_, bin.options()).remainder_(lanes);
  const at::Tensor table = at::zeros({count() * bins * lanes}, doubles)
                               .index_add_(0, index, at::ones({total_}, doubles));
  return lanes > 1 ? table.view({count(), bins, lanes}).sum(2) : table.view({count(), bins});
}

at::Tensor table_in_pieces(const std::vector<PassMember>& members, const std::vector<PieceMerge>& merge,
                           const std::function<at::Tensor(const std::vector<PassMember>&)>& table,
                           int64_t max_elements) {
  const auto whole = [&](const PassMember& m) { return m.flat.numel() <= max_elements; };
  if (std::all_of(members.begin(), members.end(), whole)) return table(members);
  std::vector<PassMember> within;
  for (const PassMember& m : members)
    if (whole(m)) within.push_back(m);
  const at::Tensor within_rows = within.empty() ? at::Tensor() : table(within);
  std::vector<at::Tensor> rows;  // one [1, columns] row per member, in member order
  at::Tensor how;                // each column's PieceMerge, on the device: made once
  int64_t next_within = 0;
  for (const PassMember& m : members) {
    if (whole(m)) {
      rows.push_back(within_rows.narrow(0, next_within++, 1));
      continue;
    }
    std::vector<at::Tensor> pieces;
    const int64_t n = m.flat.numel();
    for (int64_t offset = 0; offset < n; offset += max_elements)
      pieces.push_back(table({PassMember{m.slot, m.flat.narrow(0, offset, std::min(max_elements, n - offset))}}));
    const at::Tensor stacked = at::cat(pieces, 0);  // [pieces, columns]
    TORCH_CHECK(static_cast<size_t>(stacked.size(1)) == merge.size(), "table_in_pieces: ", stacked.size(1),
                " columns, ", merge.size(), " merges");
    // Every way of merging over all columns at once, then each column's own: a fixed
    // number of ops whatever the number of columns.
    if (!how.defined()) {
      std::vector<double> code(merge.size());
      for (size_t c = 0; c < merge.size(); ++c) code[c] = static_cast<double>(merge[c]);
      how = host_values_on(code, stacked.scalar_type(), stacked.device());
    }
    const auto is = [&](PieceMerge m) { return how == static_cast<double>(m); };
    const at::Tensor merged =
        at::where(is(PieceMerge::kSum), stacked.sum(0),
                  at::where(is(PieceMerge::kMin), stacked.amin(0),
                            at::where(is(PieceMerge::kMax), stacked.amax(0), stacked.square().sum(0).sqrt())));
    rows.push_back(merged.unsqueeze(0));
  }
  return at::cat(rows, 0);
}

}  // namespace ampscope::profiler
