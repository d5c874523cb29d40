#include "engine/data/load_stop.h"

#include "engine/errors.h"

namespace ampscope::engine::data {
namespace {

thread_local const std::atomic<bool>* t_stop_flag = nullptr;

}  // namespace

LoadStopScope::LoadStopScope(const std::atomic<bool>* stop_flag) : previous_(t_stop_flag) { t_stop_flag = stop_flag; }

LoadStopScope::~LoadStopScope() { t_stop_flag = previous_; }

void throw_if_load_stopped() {
  if (t_stop_flag != nullptr && t_stop_flag->load(std::memory_order_relaxed)) throw StopRequested{};
}

}  // namespace ampscope::engine::data
