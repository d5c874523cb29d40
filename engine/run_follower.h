#pragma once
// Following a started run through one of its subscriber queues: the one way the
// CLI, the comparison runner and the GUI read a run's events.
//
// The race it closes: a run's end is visible in two places, Trainer::state()
// (set first) and the terminal StateEvent in the queue (published right after).
// A follower that drains, then sees the terminal state, then drains again to look
// for the event must hand on what that second drain returned; throwing it away
// lost the last steps of short runs in the GUI. Here every drained event is
// delivered, and the trainer's state is read *before* draining, so "the state
// said ended and the drain found no terminal event" can only mean the queue
// dropped it; then the trainer is joined (its thread is on its last line) and
// the end is made from it.
#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include "engine/events.h"

namespace ampscope::engine {

class Trainer;

class RunFollower {
 public:
  using Handler = std::function<void(const Event&)>;
  // `trainer` may be null: then only the queue is followed (replays, tests) and
  // the run ends with the terminal event it carries.
  RunFollower(Trainer* trainer, EventQueue& queue) : trainer_(trainer), queue_(queue) {}

  // Never blocks (except to join a trainer whose run has already ended): hands
  // every queued event to on_event in order. Returns the run's terminal state
  // once it has ended and every event it published has been handed on; a
  // terminal event the queue dropped is made from the trainer and handed to
  // on_event too, so on_event sees exactly one. Later calls return it again.
  std::optional<StateEvent> poll(const Handler& on_event);

  bool ended() const { return end_.has_value(); }

 private:
  std::optional<StateEvent> deliver(const Handler& on_event);

  Trainer* trainer_;
  EventQueue& queue_;
  std::vector<Event> drained_;
  std::optional<StateEvent> end_;
};

// Follows a started run until it ends, on the caller's thread (the CLI, the
// comparison runner): RunFollower::poll, waiting on the queue in between.
// request_stop() is sent once when stop_requested() turns true (checked at
// least every `poll`). Returns the terminal state.
StateEvent follow_run(Trainer& trainer, EventQueue& queue, const RunFollower::Handler& on_event,
                      const std::function<bool()>& stop_requested,
                      std::chrono::milliseconds poll = std::chrono::milliseconds(50));

}  // namespace ampscope::engine
