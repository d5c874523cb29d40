#pragma once
// The one spelling of a byte count, in powers of 1024 with three significant
// digits ("512 B", "1.50 MiB", "15.0 GiB", "150 MiB"), as PyTorch's own
// out-of-memory messages count (GiB). It lives here, header-only and without
// LibTorch, because the engine's error messages (data too large, GPU out of
// memory) spell bytes too, and the engine sits below the profiler's
// presentation module (profiler/number_text.h, which forwards to this).
#include <cmath>
#include <cstdio>
#include <string>

namespace ampscope::engine {

inline std::string bytes_text(double bytes) {
  if (!std::isfinite(bytes)) return "\u2013";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  const int decimals = std::fabs(v) < 10 ? 2 : std::fabs(v) < 100 ? 1 : 0;
  char buffer[48];
  if (unit == 0)
    std::snprintf(buffer, sizeof buffer, "%.0f B", v);
  else
    std::snprintf(buffer, sizeof buffer, "%.*f %s", decimals, v, units[unit]);
  return buffer;
}

}  // namespace ampscope::engine
