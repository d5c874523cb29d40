#include "profiler/capture/tick_clock.h"

#include <fstream>
#include <string>

namespace ampscope::profiler {

namespace {

bool kernel_keeps_time_by_tsc() {
#if defined(__x86_64__)
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  return static_cast<bool>(in >> source) && source == "tsc";
#else
  return false;
#endif
}

}  // namespace

namespace tick_detail {
const bool g_tsc = kernel_keeps_time_by_tsc();
}

bool ticks_are_tsc() { return tick_detail::g_tsc; }

TickPair read_tick_pair() {
  // The steady clock read between two counter reads: the pair is off by at most
  // half the time between them (tens of ns).
  const uint64_t before = read_ticks();
  const int64_t ns = steady_clock_ns();
  const uint64_t after = read_ticks();
  return {before + (after - before) / 2, ns};
}

TickSpan::TickSpan(TickPair from, TickPair to, bool ticks_are_ns) : from_(from) {
  if (ticks_are_ns) return;
  identity_ = false;
  // A span too short to measure the rate (no op could have run in it) keeps
  // everything at its start.
  ns_per_tick_ = to.ticks > from.ticks ? static_cast<double>(to.ns - from.ns) / static_cast<double>(to.ticks - from.ticks)
                                       : 0.0;
}

}  // namespace ampscope::profiler
