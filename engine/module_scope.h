#pragma once
// Marks a module boundary for RecordFunction observers (ampscope's op observer,
// and PyTorch's own profiler, which shows it like torch.profiler.record_function).
// Costs one thread-local check when no observer is registered.
#include <ATen/record_function.h>

namespace ampscope::engine {

// Prefix of every module scope's RecordFunction name; the rest is the module's
// dotted path, e.g. "ampscope.module:blocks.1.attn".
inline constexpr const char* kModuleScopePrefix = "ampscope.module:";

class ModuleScope {
 public:
  // `name` is the full RecordFunction name ("ampscope.module:<path>"); it must
  // outlive the scope: models keep their scope names as members.
  explicit ModuleScope(const std::string& name) : guard_(at::RecordScope::USER_SCOPE) {
    if (guard_.isActive()) guard_.before(name);
  }
  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;

 private:
  at::RecordFunction guard_;
};

}  // namespace ampscope::engine

namespace ampscope::engine {

// Marks a phase of the training step ("ampscope.phase:forward", ":backward",
// ":optimizer") the same way, so observers can attribute the ops inside it.
inline constexpr const char* kPhaseForward = "ampscope.phase:forward";
inline constexpr const char* kPhaseBackward = "ampscope.phase:backward";
inline constexpr const char* kPhaseOptimizer = "ampscope.phase:optimizer";

class PhaseScope {
 public:
  explicit PhaseScope(const char* name) : guard_(at::RecordScope::USER_SCOPE) {
    if (guard_.isActive()) guard_.before(name);
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  at::RecordFunction guard_;
};

}  // namespace ampscope::engine
