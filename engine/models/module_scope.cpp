// The thread-local activation sink of engine/module_scope.h; here because the
// models, which call ModuleScope::output, are the library that needs it.
#include "engine/module_scope.h"

namespace ampscope::engine {

ActivationSink*& activation_sink() {
  thread_local ActivationSink* sink = nullptr;
  return sink;
}

}  // namespace ampscope::engine
