#pragma once
// Which steps' ops are recorded: the user's window and stride, and the explicit
// changes the capture made when it could not keep up. Per-op records are the
// only thing a recording sheds under load, and only through this rule: when the
// work queued for the profiler's worker (or the session writer) is too far
// behind at the start of a step the rule selects, the stride doubles from that
// step on; once the queue has drained and stayed short, it halves again, back
// to the user's stride at most. Each change, with its step and the backlog that
// caused it, is kept in the session (meta `op_sampling_fallbacks`) and said by
// `summary`, the report and the GUI. Behind is counted in record batches and in
// op records (Backlog, Limits). Steps, loss-scale updates, optimizer
// decisions and the loss never go through this: they are never shed. No LibTorch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ampscope::profiler {

class OpSamplingRule {
 public:
  // What waited for the profiler's worker and the session writer at a step. Memory
  // grows with the op records (~0.5 KB each), which a few batches of large steps
  // hold by the million: both are bounded.
  struct Backlog {
    uint64_t batches = 0;  // record batches
    uint64_t ops = 0;      // op records in them; 0 in sessions before 2026-11-26 (not counted then)
  };
  // Behind at `high_*` (either), drained at `low_*` (both). A high_ops of 0 leaves ops uncounted.
  struct Limits {
    uint64_t high_batches = 1, low_batches = 0;
    uint64_t high_ops = 0, low_ops = 0;
  };
  // One change of stride at from_step. Wider than the stride before (a fall-back):
  // from_step itself is shed, and steps from_step + every, from_step + 2*every, ...
  // are recorded. Narrower (caught up): from_step, from_step + every, ... are.
  struct Fallback {
    int64_t from_step = 0;
    int64_t every = 1;
    uint64_t backlog = 0;      // record batches waiting at from_step
    uint64_t ops_waiting = 0;  // op records in them (Backlog::ops)
  };
  // A fall-back waits this many selected steps at its stride (and a backlog that did
  // not shrink) before it doubles again: a queue that drains takes a few steps to
  // show it, and doubling at each step overshot (1 -> 32 in six steps on a loaded
  // machine). Catching up waits longer, so that the stride does not oscillate.
  static constexpr int64_t kSelectedStepsBeforeWideningAgain = 4;
  static constexpr int64_t kSelectedStepsBeforeNarrowing = 8;
  static constexpr size_t kMaxChanges = 256;  // then the stride stays (the meta line stays short)

  // `changes`: a stored rule's (decode()), to ask which steps it selected.
  OpSamplingRule(int64_t window_start, int64_t window_steps, int64_t every_n_steps,
                 std::vector<Fallback> changes = {});

  bool selects(int64_t step) const;
  // The stride in force after the last change (the user's before any).
  int64_t current_every() const { return fallbacks_.empty() ? every_ : fallbacks_.back().every; }

  enum class Change { kNone, kWidened, kNarrowed };
  // At a step selects() chose, with `waiting` behind: widens when either count
  // reaches its high limit (the step is then shed), narrows when both are at most
  // their low ones and have been for a while; see the constants above.
  Change adjust(int64_t step, Backlog waiting, const Limits& limits);
  // Doubles the stride from `step` (selected) on, unconditionally. Returns false (and
  // changes nothing) when `step` was not selected.
  bool fall_back(int64_t step, Backlog waiting);
  const std::vector<Fallback>& fallbacks() const { return fallbacks_; }

  // The changes as stored in the session: "301:2:40:1048576;340:4:42:1100000"
  // (step:every:batches:ops). Sessions before 2026-11-26 stored "301:2:128" (no ops).
  std::string encode() const;
  // nullopt when the text is neither form (a damaged or foreign value).
  static std::optional<std::vector<Fallback>> decode(const std::string& text);
  // One line for people, empty without changes: "ops recorded every 2nd step from
  // step 303 and every 4th from step 344: the capture fell behind the training
  // (1048576 op records in 40 batches waiting at step 301); steps, losses and loss
  // scales are complete". Without an op count: "(128 record batches waiting at step 301)".
  static std::string describe(const std::vector<Fallback>& fallbacks);

 private:
  int64_t window_start_;
  int64_t window_steps_;
  int64_t every_;
  std::vector<Fallback> fallbacks_;
  int64_t selected_since_change_ = 0;  // adjust() calls since the last change
};

}  // namespace ampscope::profiler
