// The op observer's timestamps: raw ticks turned into steady-clock nanoseconds by
// a line through two pairs (profiler/capture/tick_clock.h), and the ops' times
// that come out of it, checked against steady-clock reads taken around the ops.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "profiler/capture/op_observer.h"
#include "profiler/capture/tick_clock.h"

namespace ampscope::profiler {
namespace {

TEST(TickSpan, MapsTicksOnTheLineThroughItsPairs) {
  const TickSpan span({1000, 5000}, {4000, 6000}, /*ticks_are_ns=*/false);  // 3 ticks a ns
  EXPECT_EQ(span.to_ns(1000), 5000);
  EXPECT_EQ(span.to_ns(4000), 6000);
  EXPECT_EQ(span.to_ns(2500), 5500);
  EXPECT_EQ(span.to_ns(2501), 5500);  // rounded to the nearest ns
  EXPECT_EQ(span.to_ns(2502), 5501);
  EXPECT_EQ(span.to_ns(700), 4900);   // an op still open when the span began
  EXPECT_EQ(span.to_ns(4300), 6100);  // one that finished while the span was taken
  // Counter values far from zero (a machine up for months) keep their precision.
  const uint64_t up = uint64_t{1} << 62;
  const TickSpan late({up, int64_t{1} << 50}, {up + 3'000'000'000, (int64_t{1} << 50) + 1'000'000'000}, false);
  EXPECT_EQ(late.to_ns(up + 1'500'000'003), (int64_t{1} << 50) + 500'000'001);
}

TEST(TickSpan, TicksThatAreNanosecondsPassThrough) {
  const TickSpan span({1000, 1000}, {4000, 4000}, /*ticks_are_ns=*/true);
  EXPECT_EQ(span.to_ns(123456789), 123456789);
  // Without a usable counter read_ticks() is the steady clock itself.
  if (!ticks_are_tsc()) {
    const int64_t before = steady_clock_ns();
    const auto ticks = static_cast<int64_t>(read_ticks());
    EXPECT_GE(ticks, before);
    EXPECT_LE(ticks, steady_clock_ns());
  }
}

TEST(TickSpan, ASpanWithNoTimeInItKeepsItsStart) {
  const TickSpan span({1000, 5000}, {1000, 5000}, /*ticks_are_ns=*/false);
  EXPECT_EQ(span.to_ns(1000), 5000);
  EXPECT_EQ(span.to_ns(1200), 5000);
}

const OpRecord* find_op(const std::vector<OpRecord>& ops, const std::string& name) {
  for (const OpRecord& op : ops)
    if (op.name == name) return &op;
  return nullptr;
}

// A matrix product long enough to be seen (about a millisecond), bracketed by
// steady-clock reads: the recorded op must lie inside the brackets, in every span
// (a take() per step, and two steps in one span).
TEST(OpObserverTimes, OpTimesAreSteadyClockTimesInsideTheCall) {
  const at::Tensor a = at::rand({384, 384});
  OpObserver observer;
  // The pairs' reading error is tens of ns; a wrong rate or a raw counter would be off by far more.
  constexpr int64_t kSlackNs = 2'000;
  const auto check = [&](const std::vector<OpRecord>& ops, int64_t called, int64_t returned, const char* what) {
    SCOPED_TRACE(what);
    const OpRecord* mm = find_op(ops, "aten::mm");
    ASSERT_NE(mm, nullptr);
    EXPECT_GE(mm->start_ns, called - kSlackNs);
    EXPECT_LE(mm->end_ns, returned + kSlackNs);
    EXPECT_LT(mm->start_ns, mm->end_ns);
    // Most of the call is the op's own time.
    EXPECT_GT(mm->end_ns - mm->start_ns, (returned - called) / 2);
  };
  for (int64_t step = 1; step <= 2; ++step) {
    observer.begin_step(step);
    const int64_t called = steady_clock_ns();
    const at::Tensor c = at::mm(a, a);
    const int64_t returned = steady_clock_ns();
    observer.end_step();
    check(observer.collect(), called, returned, step == 1 ? "first span" : "second span");
  }
  // Two steps in one span: the line through the span's ends holds in its middle too.
  observer.begin_step(3);
  const int64_t called = steady_clock_ns();
  const at::Tensor c = at::mm(a, a);
  const int64_t returned = steady_clock_ns();
  observer.end_step();
  observer.begin_step(4);
  const at::Tensor d = at::add(c, 1);
  observer.end_step();
  check(observer.collect(), called, returned, "a span of two steps");
}

}  // namespace
}  // namespace ampscope::profiler
