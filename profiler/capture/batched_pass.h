#pragma once
// The machinery of the batched range statistics (gradient_stats.cpp, activation_stats.cpp):
// many tensors' statistics in a fixed number of ATen ops, whatever their number.
// The tensors of a pass are laid end to end in one 1-D tensor; every statistic is
// then one elementwise op over all of them and one segment reduction (one row per
// tensor). A per-tensor op is what made a sample's cost grow with the model.
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace ampscope::profiler {

// Elements one pass takes at most (a larger tensor is a pass of its own): bounds
// the pass's copy and its masks (about 30 bytes an element in float64) while the
// number of ops stays independent of the number of tensors.
inline constexpr int64_t kPassElements = int64_t{1} << 24;

// Whether a tensor's elements are there to read. Not in a tensor subclass that holds no data of
// its own (DTensor: the Python capture hands its local shard over instead), nor in a parameter
// FSDP gathered for the forward and freed again (its storage resized to 0 bytes): reading
// either fails ("its data is not allocated yet"), and so would the whole sample.
inline bool holds_data(const at::Tensor& t) { return t.has_storage() && t.storage().data() != nullptr; }

// A tensor's elements as one dimension, without dispatching an op (a view op per
// tensor would grow with the model). Every statistic here is order-free, so a
// dense tensor's storage span will do in any memory format; anything else is made
// contiguous first (one op, rare). The result has no autograd history: holding it
// keeps the storage alive, not the graph.
at::Tensor flat_elements(const at::Tensor& t);

// The dtypes the passes' CPU loops read in place, widening each element as ATen's
// copy would: fp16, bf16, float32, float64 (batched_pass.cpp's copy, range_stats_cpu,
// quantization_sim's packing; an activation of another dtype is copied to float32).
bool widened_on_the_cpu(at::ScalarType t);

struct PassMember {
  size_t slot;      // the caller's index of this tensor (results go back there)
  at::Tensor flat;  // flat_elements of it
};

// Splits tensors, in the order added, into passes: a pass ends where the device
// changes or it would exceed kPassElements. On devices other than the CPU a pass's
// members come back grouped by dtype (stable): at::cat is one kernel only for
// inputs of one dtype.
class PassPlanner {
 public:
  void add(size_t slot, at::Tensor flat);
  std::vector<std::vector<PassMember>> take();

 private:
  std::vector<std::vector<PassMember>> passes_;
  int64_t elements_ = 0;  // in the last pass
};

// A small host vector (lengths, bounds) as a tensor on `device`. On CUDA through
// pinned memory, without waiting: a plain copy from pageable memory synchronises the
// stream, so each would stall the pass until the GPU caught up with it.
at::Tensor host_values_on(const std::vector<int64_t>& values, at::Device device);
at::Tensor host_values_on(const std::vector<double>& values, at::ScalarType dtype, at::Device device);

// Segment lengths for at::segment_reduce, made to stay fast on a GPU: on CUDA it
// reduces each segment with one thread block, so a segment of millions of elements
// (a GPT-2's embedding gradient, a module's output) ran on one SM of 132, some
// milliseconds a reduction. (An H200 spent about a second of GPU time on one sample
// of a 12-layer GPT, issue 27; these reductions were among its kernels.) Segments
// longer than kSegmentPiece are cut into pieces reduced in parallel, and the pieces'
// results reduced per segment: two launches whatever the lengths, each block reading
// at most kSegmentPiece values.
inline constexpr int64_t kSegmentPiece = 4096;

class SegmentLengths {
 public:
  SegmentLengths() = default;
  SegmentLengths(const std::vector<int64_t>& lengths, at::Device device);
  // One value per segment of 1-D `values`: "sum", "max" or "min". (1-D only: CUDA
  // runs wider data through a kernel with one thread per segment and column.)
  at::Tensor reduce(const at::Tensor& values, std::string_view how) const;
  // The segments' own lengths (int64, on the device).
  const at::Tensor& lengths() const { return lengths_; }
  // Each of the `total` elements' segment index (0, 0, ..., 1, ...), int64, without a
  // host sync. CUDA's repeat_interleave writes each segment with one warp, so a long
  // segment is written piece by piece (a 12-layer GPT's sample spent 149 ms of an
  // H200's time in it, issue 27).
  at::Tensor segment_of_each_element(int64_t total) const;
  const std::vector<int64_t>& host_lengths() const { return host_lengths_; }

 private:
  std::vector<int64_t> host_lengths_;
  at::Tensor lengths_;
  at::Tensor pieces_;              // each piece's length; undefined when no segment is longer than a piece
  at::Tensor pieces_per_segment_;  // how many pieces make each segment
};

// One pass's tensors end to end in `dtype` (on the members' device), and their
// per-tensor (per-segment) reductions. A fixed number of ops whatever the number of members.
class Segments {
 public:
  Segments(const std::vector<PassMember>& members, at::ScalarType dtype);
  const at::Tensor& values() const { return values_; }
  int64_t count() const { return static_cast<int64_t>(segments_.host_lengths().size()); }
  int64_t length(size_t member) const { return segments_.host_lengths()[member]; }
  // One value per member: the "sum", "max", "min" of `values` (laid out as values()).
  at::Tensor reduce(const at::Tensor& values, std::string_view how) const;
  // One float64 count per member of the true elements of `mask` (exact below 2^53).
  at::Tensor count_true(const at::Tensor& mask) const;
  // Each element's member index (0, 0, ..., 1, ...), without a host sync; made once.
  const at::Tensor& member_of_each_element() const;
  // [members, bins] float64: how many elements of each member fall in each bin (`bin`:
  // an int64 per element, laid out as values(), in [0, bins)). One index_add_, no host
  // sync. On a GPU the elements of a member mostly share a bin (a gradient's magnitudes
  // sit in a few binades), so their atomic adds would queue on one address: there the
  // counts go to `lanes` copies of the table by element index, summed after (0: 1 on
  // the CPU, kHistogramLanes elsewhere).
  static constexpr int64_t kHistogramLanes = 32;
  at::Tensor histogram(const at::Tensor& bin, int64_t bins, int64_t lanes = 0) const;

 private:
  int64_t total_ = 0;
  at::Tensor values_;
  SegmentLengths segments_;
  mutable at::Tensor member_of_element_;
};

// How one column of a pass's table combines over the pieces of one member.
enum class PieceMerge { kSum, kMin, kMax, kRootSumSquares };

// The ATen ops' table of a pass, with no member taken whole past `max_elements`: a larger
// member is measured in pieces of at most that many elements, each through `table` on its
// own, and its pieces' rows are merged column by column by `merge` (one entry per column).
// Members within the bound go through `table` together, once. Rows come back in member
// order, as `table(members)` would give them. The ATen ops hold temporaries of some 30
// bytes an element at once (masks, a float64 copy, int64 bin indices): a whole 411M-element
// output, GPT-2's logits, took 20 GB of the user's GPU in one sample (session 44: an H200
// build without ampscope's CUDA kernels, which read in place and need none of it).
at::Tensor table_in_pieces(const std::vector<PassMember>& members, const std::vector<PieceMerge>& merge,
                           const std::function<at::Tensor(const std::vector<PassMember>&)>& table,
                           int64_t max_elements = kPassElements);

}  // namespace ampscope::profiler
