#pragma once
// Which steps' ops are recorded: the user's window and stride, and the explicit
// fall-backs the capture made when it could not keep up. Per-op records are the
// only thing a recording sheds under load, and only through this rule: when the
// work queued for the profiler's worker (or the session writer) is too far
// behind at the start of a step the rule selects, the stride doubles from that
// step on, and the change, with its step and reason, is kept in the session
// (meta `op_sampling_fallbacks`) and said by `summary`, the report and the GUI.
// Steps, loss-scale updates, optimizer decisions and the loss never go through
// this: they are never shed. No LibTorch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ampscope::profiler {

class OpSamplingRule {
 public:
  // One fall-back: the ops of steps from_step + every, from_step + 2*every, ... are
  // recorded (from_step itself was the first step shed).
  struct Fallback {
    int64_t from_step = 0;
    int64_t every = 1;
    uint64_t backlog = 0;  // record batches still waiting when the capture fell back
  };

  OpSamplingRule(int64_t window_start, int64_t window_steps, int64_t every_n_steps);

  bool selects(int64_t step) const;
  // The capture is `backlog` batches behind at `step` (a step selects() chose):
  // from here on, every other step of the current stride. Returns false (and
  // changes nothing) when `step` was not selected.
  bool fall_back(int64_t step, uint64_t backlog);
  const std::vector<Fallback>& fallbacks() const { return fallbacks_; }

  // The fall-backs as stored in the session: "301:2:128;340:4:130" (step:every:backlog).
  std::string encode() const;
  // nullopt when the text is not that form (a damaged or foreign value).
  static std::optional<std::vector<Fallback>> decode(const std::string& text);
  // One line for people, empty without fall-backs: "ops recorded every 2nd step from
  // step 303 and every 4th from step 344: the capture fell behind the training
  // (128 record batches waiting at step 301); steps, losses and loss scales are complete".
  static std::string describe(const std::vector<Fallback>& fallbacks);

 private:
  int64_t window_start_;
  int64_t window_steps_;
  int64_t every_;
  std::vector<Fallback> fallbacks_;
};

}  // namespace ampscope::profiler
