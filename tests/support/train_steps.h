#pragma once
// Running a TrainingRun step by step in tests, and reading its loss curve.
#include <vector>

#include "engine/training_run.h"

namespace ampscope::test {

inline std::vector<engine::StepEvent> train_all_steps(const engine::TrainConfig& config) {
  engine::TrainingRun run(config);
  std::vector<engine::StepEvent> events;
  for (int64_t s = 1; s <= config.steps; ++s) events.push_back(run.step(s));
  return events;
}

// Mean loss of events [from, to).
inline double mean_loss(const std::vector<engine::StepEvent>& e, size_t from, size_t to) {
  double sum = 0;
  for (size_t i = from; i < to; ++i) sum += e[i].loss;
  return sum / static_cast<double>(to - from);
}

// A step event with only its step number, for queue tests (a designated
// initializer would leave g++'s -Wmissing-field-initializers to warn).
inline engine::StepEvent step_event(int64_t step) {
  engine::StepEvent e;
  e.step = step;
  return e;
}

}  // namespace ampscope::test
