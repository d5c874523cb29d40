#include "ui/models/store_session_io.h"

#include <algorithm>

#include "profiler/store/session_copy.h"
#include "profiler/store/session_reader.h"

namespace ampscope::ui {

profiler::ProfileSnapshotPtr snapshot_from_session(const std::string& path, size_t top_kernels,
                                                   size_t history_steps) {
  const auto session = profiler::SessionReader::open(path);
  auto snapshot = std::make_shared<profiler::ProfileSnapshot>();
  const auto steps = session.steps();
  snapshot->step = steps.empty() ? 0 : steps.back().step;
  snapshot->op_stats = session.op_stats();
  // Only the top kernels: a session can hold millions of records (lazily summarised by the store).
  snapshot->kernels = session.top_kernels(top_kernels);
  snapshot->gpu_attribution = session.gpu_attribution();
  snapshot->gradients = session.latest_gradients();
  const auto gradient_steps = session.gradient_steps();
  const size_t first = gradient_steps.size() > history_steps ? gradient_steps.size() - history_steps : 0;
  for (size_t i = first; i < gradient_steps.size(); ++i) {
    const auto samples = session.gradients(gradient_steps[i]);
    snapshot->gradient_history.insert(snapshot->gradient_history.end(), samples.begin(), samples.end());
  }
  if (const auto activation_steps = session.activation_steps(); !activation_steps.empty())
    snapshot->activations = session.activations(activation_steps.back());
  snapshot->first_fp16_overflow = session.first_fp16_overflow();
  snapshot->gpu_tracing = session.meta().gpu_tracing;
  return snapshot;
}

LoadedSession StoreSessionIO::load(const std::string& path) {
  const auto session = profiler::SessionReader::open(path);
  LoadedSession loaded;
  loaded.meta = session.meta();
  loaded.steps = session.steps();
  loaded.optimizer_steps = session.optimizer_steps();
  const bool has_profile = session.op_count() > 0 || session.kernel_count() > 0 || !session.gradient_steps().empty();
  if (has_profile) loaded.profile = snapshot_from_session(path);
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
