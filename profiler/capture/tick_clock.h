#pragma once
// The op observer's timestamps. Two clock reads per recorded op are a sizeable
// part of what the observer costs the training thread: steady_clock::now() takes
// about 24 ns on the development VM, the CPU's time-stamp counter (rdtsc) about
// 10 ns. Ops keep raw ticks; the profiler's worker turns them into steady-clock
// nanoseconds (the clock of kernels, steps and everything else in a session) by
// a line through two (ticks, ns) pairs read around the ops (TickSpan): exact but
// for the pairs' own reading error, whatever the counter's rate, and NTP's slewing
// of the steady clock counts only within one span.
//
// The counter is used only where the kernel itself keeps time by it (its clock
// source is "tsc": then it is invariant and the same on every core); elsewhere,
// and on other CPUs, ticks are steady-clock nanoseconds and the span is identity.
// PyTorch's profiler makes the same choice (c10::getApproximateTime).
#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace ampscope::profiler {

// Whether read_ticks() reads the time-stamp counter; decided once per process.
bool ticks_are_tsc();
namespace tick_detail {
extern const bool g_tsc;  // ticks_are_tsc(), read on the hot path
}

inline int64_t steady_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline uint64_t read_ticks() {
#if defined(__x86_64__)
  if (tick_detail::g_tsc) return __rdtsc();
#endif
  return static_cast<uint64_t>(steady_clock_ns());
}

// The ticks and the steady clock at one moment.
struct TickPair {
  uint64_t ticks = 0;
  int64_t ns = 0;
};
TickPair read_tick_pair();

// Ticks read between two pairs, as steady-clock nanoseconds.
class TickSpan {
 public:
  TickSpan() = default;
  // ticks_are_ns: read_ticks() read the steady clock (no usable counter here).
  TickSpan(TickPair from, TickPair to, bool ticks_are_ns = !ticks_are_tsc());
  int64_t to_ns(uint64_t ticks) const {
    if (identity_) return static_cast<int64_t>(ticks);
    const auto since = static_cast<double>(static_cast<int64_t>(ticks - from_.ticks));
    return from_.ns + static_cast<int64_t>(since * ns_per_tick_ + (since >= 0 ? 0.5 : -0.5));
  }

 private:
  TickPair from_;
  double ns_per_tick_ = 1.0;
  bool identity_ = true;
};

}  // namespace ampscope::profiler
