// RunFollower, the one way the CLI, the comparison runner and the GUI read a
// run's events: every step arrives, in order, and the end is reported exactly
// once, also when the run ends while the follower is handing events on (the race
// that lost the last steps of short runs in the GUI) and when the queue dropped
// the terminal event.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "engine/run_follower.h"
#include "tests/support/tiny_configs.h"
#include "tests/support/train_steps.h"
#include "tests/support/wait_until.h"
#include "engine/trainer.h"

namespace ampscope::engine {
namespace {

using namespace std::chrono_literals;

TrainConfig tiny(int64_t steps) { return test::tiny_mlp(steps); }
using test::wait_until;

// What a follower handed on.
struct Seen {
  std::vector<int64_t> steps;
  int terminal_events = 0;
  RunState last_state = RunState::kIdle;
  void operator()(const Event& e) {
    if (const auto* step = std::get_if<StepEvent>(&e)) steps.push_back(step->step);
    if (const auto* state = std::get_if<StateEvent>(&e); state && is_terminal(state->state)) {
      ++terminal_events;
      last_state = state->state;
    }
  }
  void expect_every_step(int64_t n) const {
    ASSERT_EQ(static_cast<int64_t>(steps.size()), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(steps[static_cast<size_t>(i)], i + 1);
  }
};

// Holds the training thread before step 2 until the consumer has seen step 1, so
// the run's remaining steps and its end happen while the consumer is busy.
class HoldBeforeStepTwo : public TrainingObserver {
 public:
  void on_step_begin(int64_t step) override {
    if (step == 2) held_ok = wait_until([&] { return release.load(); });
  }
  std::atomic<bool> release{false};
  std::atomic<bool> held_ok{true};
};

TEST(RunFollower, ARunThatEndsWhileEventsAreHandedOnLosesNoStep) {
  Trainer trainer(tiny(8));
  auto queue = trainer.subscribe(64);
  HoldBeforeStepTwo hold;
  trainer.add_observer(&hold);
  trainer.start();
  RunFollower follower(&trainer, *queue);
  Seen seen;
  std::optional<StateEvent> end;
  ASSERT_TRUE(wait_until([&] {
    end = follower.poll([&](const Event& e) {
      seen(e);
      if (std::holds_alternative<StepEvent>(e) && !hold.release) {
        // Step 1 is being handed on: let the run finish before this poll returns.
        hold.release = true;
        EXPECT_TRUE(wait_until([&] { return is_terminal(trainer.state()); }));
      }
    });
    return end.has_value();
  }));
  EXPECT_TRUE(hold.held_ok);
  EXPECT_EQ(end->state, RunState::kFinished);
  EXPECT_EQ(end->step, 8);
  EXPECT_EQ(seen.terminal_events, 1);
  seen.expect_every_step(8);
  // Asking again repeats the end and hands on nothing.
  Seen after;
  EXPECT_EQ(follower.poll(std::ref(after))->state, RunState::kFinished);
  EXPECT_EQ(after.terminal_events, 0);
}

TEST(RunFollower, ADroppedTerminalEventIsMadeFromTheTrainer) {
  Trainer trainer(tiny(40));
  auto small = trainer.subscribe(4);
  trainer.start();
  trainer.wait();  // nobody drained: the queue kept the first 4 events and dropped the rest
  ASSERT_GT(small->dropped(), 0u);
  RunFollower follower(&trainer, *small);
  Seen seen;
  const auto end = follower.poll(std::ref(seen));
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->state, RunState::kFinished);
  EXPECT_EQ(end->step, 40);
  EXPECT_EQ(seen.terminal_events, 1);  // the made one, handed on like a real one
  seen.expect_every_step(3);            // run-started + steps 1..3 fit
}

TEST(RunFollower, WithoutATrainerTheQueuesTerminalEventEndsIt) {
  EventQueue queue(16);
  RunFollower follower(nullptr, queue);
  Seen seen;
  EXPECT_FALSE(follower.poll(std::ref(seen)).has_value());
  queue.try_push(test::step_event(1));
  EXPECT_FALSE(follower.poll(std::ref(seen)).has_value());
  queue.try_push(test::step_event(2));
  queue.try_push(StateEvent{RunState::kStopped, 2, {}});
  const auto end = follower.poll(std::ref(seen));
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->state, RunState::kStopped);
  seen.expect_every_step(2);
}

// The acceptance run of issue 14: 200 short runs in a row, every step of each arrives.
TEST(RunFollower, TwoHundredShortRunsEachDeliverEveryStep) {
  for (int run = 0; run < 200; ++run) {
    Trainer trainer(tiny(3));
    auto queue = trainer.subscribe(64);
    trainer.start();
    Seen seen;
    const StateEvent end = follow_run(trainer, *queue, std::ref(seen), [] { return false; }, 1ms);
    ASSERT_EQ(end.state, RunState::kFinished) << "run " << run;
    ASSERT_EQ(seen.steps.size(), 3u) << "run " << run;
    ASSERT_EQ(seen.terminal_events, 1) << "run " << run;
  }
}

TEST(RunFollower, FollowRunSendsOneStopWhenAsked) {
  Trainer endless(tiny(1'000'000));
  auto queue = endless.subscribe(64);
  endless.start();
  Seen seen;
  const StateEvent stopped = follow_run(endless, *queue, std::ref(seen), [&] { return seen.steps.size() >= 3; });
  endless.wait();
  EXPECT_EQ(stopped.state, RunState::kStopped);
  EXPECT_GE(stopped.step, 3);
  EXPECT_EQ(seen.terminal_events, 1);
  seen.expect_every_step(stopped.step);
}

}  // namespace
}  // namespace ampscope::engine
