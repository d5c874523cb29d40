#include "engine/run_follower.h"

#include <variant>

#include "engine/trainer.h"

namespace ampscope::engine {

std::optional<StateEvent> RunFollower::deliver(const Handler& on_event) {
  drained_.clear();
  queue_.drain(drained_);
  std::optional<StateEvent> terminal;
  for (const Event& event : drained_) {
    // Nothing follows a terminal event; if anything did, it is still handed on.
    on_event(event);
    if (const auto* state = std::get_if<StateEvent>(&event); state && is_terminal(state->state)) terminal = *state;
  }
  return terminal;
}

std::optional<StateEvent> RunFollower::poll(const Handler& on_event) {
  if (end_) return end_;
  // Read before draining: the trainer sets its state just before publishing the event.
  const bool ended = trainer_ != nullptr && is_terminal(trainer_->state());
  if (auto terminal = deliver(on_event)) return end_ = terminal;
  if (!ended) return std::nullopt;
  trainer_->wait();  // every event the run published is queued now
  if (auto terminal = deliver(on_event)) return end_ = terminal;
  // The queue was full when the run ended.
  const Event made = StateEvent{trainer_->state(), trainer_->completed_steps(), trainer_->error_message()};
  on_event(made);
  return end_ = std::get<StateEvent>(made);
}

StateEvent follow_run(Trainer& trainer, EventQueue& queue, const RunFollower::Handler& on_event,
                      const std::function<bool()>& stop_requested, std::chrono::milliseconds poll) {
  RunFollower follower(&trainer, queue);
  bool stop_sent = false;
  while (true) {
    if (auto end = follower.poll(on_event)) return *end;
    if (!stop_sent && stop_requested && stop_requested()) {
      trainer.request_stop();
      stop_sent = true;
    }
    queue.wait_for(poll);
  }
}

}  // namespace ampscope::engine
