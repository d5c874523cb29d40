#include "profiler/capture/range_stats_cpu.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace ampscope::profiler {
namespace {

// Elements per task of at::parallel_for: a large member is cut into runs, each
// summed into its own row, so one embedding gradient still uses every thread.
constexpr int64_t kChunkElements = int64_t{1} << 16;

struct Layout {
  int64_t places;  // bins of places: bounds + 1
  int log2_min, log2_bins;
  int64_t columns() const { return kRangePlaces + places + log2_bins; }
};

// floor(log2 a) for a finite a > 0: the exponent field of a double, exactly (log2
// can round up just below a power of two), frexp for a subnormal double.
int floor_log2(double a) {
  const auto field = static_cast<int>((std::bit_cast<uint64_t>(a) >> 52) & 0x7FF);
  if (field != 0) return field - 1023;
  int e = 0;
  std::frexp(a, &e);
  return e - 1;
}

// Elements [begin, end) of one member into a row of partial statistics.
template <typename Source, typename Compute>
void chunk(const Source* x, int64_t begin, int64_t end, Compute scale, const std::vector<Compute>& bounds,
           const Layout& layout, double* row) {
  double zeros = 0, nonfinite = 0, sum_squares = 0;
  Compute min_nonzero = std::numeric_limits<Compute>::infinity(), max_abs = 0;
  double* places = row + kRangePlaces;
  double* log2 = places + layout.places;
  const auto bound_count = static_cast<int64_t>(bounds.size());
  for (int64_t i = begin; i < end; ++i) {
    const auto v = static_cast<Compute>(x[i]);
    if (!std::isfinite(v)) {
      ++nonfinite;
      continue;
    }
    const Compute a = std::abs(v);
    sum_squares += static_cast<double>(v) * static_cast<double>(v);
    max_abs = std::max(max_abs, a);
    if (a == 0) {
      ++zeros;
      continue;
    }
    min_nonzero = std::min(min_nonzero, a);
    // The bounds ascend, and most magnitudes pass most of them.
    const Compute m = a * scale;
    int64_t place = 0;
    while (place < bound_count && m >= bounds[static_cast<size_t>(place)]) ++place;
    places[place] += 1;
    if (layout.log2_bins > 0) {
      const int bin = std::clamp(floor_log2(static_cast<double>(a)), layout.log2_min,
                                 layout.log2_min + layout.log2_bins - 1) - layout.log2_min;
      log2[bin] += 1;
    }
  }
  row[kRangeZeros] = zeros;
  row[kRangeNonfinite] = nonfinite;
  row[kRangeMinNonzero] = static_cast<double>(min_nonzero);
  row[kRangeMaxAbs] = static_cast<double>(max_abs);
  row[kRangeSumSquares] = sum_squares;
}

template <typename Compute>
void run(const std::vector<PassMember>& members, double magnitude_scale, const std::vector<double>& bounds,
         const Layout& layout, at::Tensor& table) {
  std::vector<Compute> typed(bounds.begin(), bounds.end());
  const auto scale = static_cast<Compute>(magnitude_scale);
  struct Task {
    size_t member;
    int64_t begin, end;
  };
  std::vector<Task> tasks;
  for (size_t m = 0; m < members.size(); ++m) {
    const int64_t n = members[m].flat.numel();
    for (int64_t b = 0; b < n; b += kChunkElements) tasks.push_back({m, b, std::min(n, b + kChunkElements)});
  }
  const int64_t columns = layout.columns();
  std::vector<double> partial(tasks.size() * static_cast<size_t>(columns), 0.0);
  at::parallel_for(0, static_cast<int64_t>(tasks.size()), 1, [&](int64_t first, int64_t last) {
    for (int64_t t = first; t < last; ++t) {
      const Task& task = tasks[static_cast<size_t>(t)];
      const at::Tensor& flat = members[task.member].flat;
      double* row = partial.data() + t * columns;
      switch (flat.scalar_type()) {
        case at::kFloat: chunk(flat.const_data_ptr<float>(), task.begin, task.end, scale, typed, layout, row); break;
        case at::kDouble: chunk(flat.const_data_ptr<double>(), task.begin, task.end, scale, typed, layout, row); break;
        case at::kBFloat16:
          chunk(flat.const_data_ptr<at::BFloat16>(), task.begin, task.end, scale, typed, layout, row);
          break;
        case at::kHalf: chunk(flat.const_data_ptr<at::Half>(), task.begin, task.end, scale, typed, layout, row); break;
        default: break;  // range_stats_on_cpu refused it
      }
    }
  });
  // Rows of a member combined in task order.
  double* out = table.mutable_data_ptr<double>();
  for (size_t m = 0; m < members.size(); ++m) {
    double* row = out + static_cast<int64_t>(m) * columns;
    row[kRangeMinNonzero] = std::numeric_limits<double>::infinity();
  }
  for (size_t t = 0; t < tasks.size(); ++t) {
    const double* from = partial.data() + t * static_cast<size_t>(columns);
    double* row = out + static_cast<int64_t>(tasks[t].member) * columns;
    for (int64_t c = 0; c < columns; ++c) {
      if (c == kRangeMinNonzero) row[c] = std::min(row[c], from[c]);
      else if (c == kRangeMaxAbs) row[c] = std::max(row[c], from[c]);
      else row[c] += from[c];
    }
  }
}

}  // namespace

bool range_stats_on_cpu(const std::vector<PassMember>& members) {
  return !members.empty() && std::all_of(members.begin(), members.end(), [](const PassMember& m) {
    return m.flat.is_cpu() && m.flat.is_contiguous() && widened_on_the_cpu(m.flat.scalar_type());
  });
}

at::Tensor range_stats_cpu(const std::vector<PassMember>& members, at::ScalarType compute, double magnitude_scale,
                           const std::vector<double>& bounds, int log2_min, int log2_bins) {
  TORCH_CHECK(range_stats_on_cpu(members), "range_stats_cpu: CPU members of float32, float64, bf16 or fp16");
  TORCH_CHECK(compute == at::kFloat || compute == at::kDouble, "range_stats_cpu: float32 or float64");
  const Layout layout{static_cast<int64_t>(bounds.size()) + 1, log2_min, log2_bins};
  at::Tensor table = at::zeros({static_cast<int64_t>(members.size()), layout.columns()}, at::kDouble);
  if (compute == at::kDouble) run<double>(members, magnitude_scale, bounds, layout, table);
  else run<float>(members, magnitude_scale, bounds, layout, table);
  return table;
}

}  // namespace ampscope::profiler
