#include "ui/models/store_session_io.h"

#include <algorithm>

#include "profiler/store/session_copy.h"
#include "profiler/session_meta_keys.h"

namespace ampscope::ui {

LoadedSession loaded_session(profiler::SessionView session) {
  LoadedSession loaded;
  loaded.findings = profiler::session_findings(session);  // before the view's parts move out
  // The profile part of the view is the live views' snapshot type: moved, not repacked.
  if (session.has_profile())
    loaded.profile = std::make_shared<const profiler::ProfileSnapshot>(
        std::move(static_cast<profiler::ProfileSnapshot&>(session)));
  loaded.health = session.health;
  loaded.writer_pid = profiler::meta_key::count(session.meta_values, profiler::meta_key::kPid).value_or(0);
  if (const auto host = session.meta_values.find(profiler::meta_key::kHost); host != session.meta_values.end())
    loaded.writer_host = host->second;
  if (const auto state = session.meta_values.find(profiler::meta_key::kFinalState); state != session.meta_values.end())
    loaded.final_state = state->second;
  loaded.script = profiler::script_facts(session.meta_values);
  loaded.meta = std::move(session.meta);
  loaded.meta_values = std::move(session.meta_values);
  loaded.steps = std::move(session.steps);
  loaded.step_timing = session.step_timing;
  loaded.memory_peak = session.memory_peak;
  loaded.optimizer_steps = std::move(session.optimizer_steps);
  loaded.sampled_gradient_norms = std::move(session.sampled_gradient_norms);
  loaded.schedulers = std::move(session.schedulers);
  loaded.compile = std::move(session.compile);
  return loaded;
}

LoadedFile StoreSessionIO::load(const std::string& path) {
  profiler::RecordedFile file = profiler::open_recorded_file(path, kGuiViewOptions);
  LoadedFile loaded;
  if (file.comparison) {
    loaded.comparison = std::move(file.comparison);
  } else {
    loaded.session = loaded_session(std::move(*file.session));
  }
  std::lock_guard lock(mutex_);
  shown_ = path;
  return loaded;
}

void StoreSessionIO::saveCurrent(const std::string& path) {
  std::string current;
  {
    std::lock_guard lock(mutex_);
    current = current_;
  }
  if (current.empty()) throw std::runtime_error("no run has recorded a session yet: start a run first");
  profiler::copy_session(current, path);
}

void StoreSessionIO::setCurrentSessionPath(std::string path) {
  std::lock_guard lock(mutex_);
  current_ = path;
  shown_ = std::move(path);
}

std::string StoreSessionIO::shownSessionPath() const {
  std::lock_guard lock(mutex_);
  return shown_;
}

}  // namespace ampscope::ui
