#include "profiler/capture/format_counts.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace ampscope::profiler {
namespace {

// Each count as a lower bound t with "m >= t" (rather than the mix of <, <=, > of
// cast_outcome): m <= a is m >= nextafter(a) negated, in the magnitudes' own dtype,
// where ATen compares too (a float32 tensor against a double bound compares in float32).
template <typename T>
double at_or_above(double bound, bool inclusive) {
  const T b = static_cast<T>(bound);
  return static_cast<double>(inclusive ? b : std::nextafter(b, std::numeric_limits<T>::infinity()));
}

struct Bounds {
  // Per format: flushed below `subnormal`, subnormal below `normal`, overflow from `overflow`.
  std::array<double, kFloatFormatCount> subnormal{}, normal{}, overflow{};
};

Bounds bounds_for(at::ScalarType dtype) {
  const auto bound = [&](double value, bool inclusive) {
    return dtype == at::kDouble ? at_or_above<double>(value, inclusive) : at_or_above<float>(value, inclusive);
  };
  Bounds b;
  for (const FloatFormatLimits& f : kFloatFormats) {
    const auto i = static_cast<size_t>(f.format);
    b.subnormal[i] = bound(f.min_subnormal / 2, false);                 // flushed: m <= half the smallest subnormal
    b.normal[i] = bound(f.min_normal - f.min_subnormal / 2, true);      // subnormal: below this
    b.overflow[i] = bound(f.overflow_bound, f.overflow_at_bound);
  }
  return b;
}

// The bounds sorted and distinct, and each format's bounds' ranks among them.
struct Places {
  Bounds b;
  std::vector<double> sorted;
  int64_t rank(double bound) const {
    return static_cast<int64_t>(std::lower_bound(sorted.begin(), sorted.end(), bound) - sorted.begin());
  }
};

Places places_for(at::ScalarType dtype) {
  Places p;
  p.b = bounds_for(dtype);
  for (const auto* list : {&p.b.subnormal, &p.b.normal, &p.b.overflow})
    p.sorted.insert(p.sorted.end(), list->begin(), list->end());
  std::sort(p.sorted.begin(), p.sorted.end());
  p.sorted.erase(std::unique(p.sorted.begin(), p.sorted.end()), p.sorted.end());
  return p;
}

}  // namespace

std::vector<double> format_bounds(at::ScalarType dtype) { return places_for(dtype).sorted; }

at::Tensor format_counts_from_places(const at::Tensor& histogram, at::ScalarType dtype) {
  const Places p = places_for(dtype);
  const auto places = static_cast<int64_t>(p.sorted.size());
  TORCH_CHECK(histogram.size(1) == places + 1, "format_counts_from_places: ", places + 1, " bins");
  // below[:, r]: nonzero finite magnitudes under the bound of rank r (place <= r).
  const at::Tensor below = histogram.cumsum(1);
  const at::Tensor all = below.select(1, places).unsqueeze(1);
  // Columns picked by views, not an index tensor: no host-to-device copy (on CUDA a
  // synchronous one) in the pass.
  const auto columns = [&](const std::array<double, kFloatFormatCount>& bounds_of_formats) {
    std::vector<at::Tensor> picked;
    for (const double bound : bounds_of_formats) picked.push_back(below.select(1, p.rank(bound)));
    return at::stack(picked, 1);
  };
  const at::Tensor flushed = columns(p.b.subnormal);
  const at::Tensor subnormals = columns(p.b.normal) - flushed;
  const at::Tensor overflows = all - columns(p.b.overflow);
  // [members, formats, 3] -> [members, formats * 3]: flushed, subnormal, overflow per format.
  return at::stack({flushed, subnormals, overflows}, 2).reshape({histogram.size(0), kCountsPerFormat * kFloatFormatCount});
}

at::Tensor format_counts(const at::Tensor& magnitudes, const at::Tensor& nonzero, const Segments& seg) {
  TORCH_CHECK(magnitudes.scalar_type() == at::kFloat || magnitudes.scalar_type() == at::kDouble,
              "format_counts: float32 or float64 magnitudes");
  const std::vector<double> sorted = format_bounds(magnitudes.scalar_type());
  const auto places = static_cast<int64_t>(sorted.size());  // a magnitude's place: how many bounds are <= it
  const at::Tensor bounds = host_values_on(sorted, magnitudes.scalar_type(), magnitudes.device());
  // Places 0..places for nonzero finite magnitudes; zeros and non-finite ones go to
  // a last bin of their own, left out below.
  const at::Tensor place = at::where(nonzero, at::bucketize(magnitudes, bounds, /*out_int32=*/false, /*right=*/true),
                                     static_cast<int64_t>(places + 1));
  return format_counts_from_places(seg.histogram(place, places + 2).narrow(1, 0, places + 1),
                                   magnitudes.scalar_type());
}

}  // namespace ampscope::profiler
