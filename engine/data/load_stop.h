#pragma once
// A stop (Ctrl-C, SIGTERM, the GUI's Stop) must end a run within a second, also
// while its data loads: a data file is read whole and parsed, which for gigabytes
// takes many seconds. The run lends its stop flag to the loaders on its thread for
// as long as a scope lives; they call throw_if_load_stopped() between chunks.
#include <atomic>

namespace ampscope::engine::data {

class LoadStopScope {
 public:
  explicit LoadStopScope(const std::atomic<bool>* stop_flag);
  ~LoadStopScope();
  LoadStopScope(const LoadStopScope&) = delete;
  LoadStopScope& operator=(const LoadStopScope&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

// Throws engine::StopRequested when the flag lent to this thread is set.
void throw_if_load_stopped();

}  // namespace ampscope::engine::data
