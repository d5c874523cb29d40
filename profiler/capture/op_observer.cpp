#include "profiler/capture/op_observer.h"

#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>
#include <c10/core/ScalarType.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string_view>

#include "engine/module_scope.h"
#include "profiler/analysis/op_classifier.h"
#include "profiler/capture/dtype_names.h"

namespace ampscope::profiler {

namespace {

std::atomic<OpObserver*> g_active{nullptr};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

constexpr std::string_view kModulePrefix = "ampscope.module:";
constexpr std::string_view kPhasePrefix = "ampscope.phase:";

}  // namespace

// One open op on a thread's stack.
struct OpenOp {
  OpRecord record;
  bool autocast_on = false;  // autocast was enabled for some device when the op was entered
  bool is_cast = false;
  bool is_backward_node = false;
  bool backward_of_autocast_cast = false;  // a backward node of an autocast-inserted cast
};

// What a user scope on the stack was, so its exit undoes the right thing.
enum class ScopeKind : uint8_t { kModule, kPhase, kOther };

struct OpObserver::ThreadState {
  uint64_t thread_number = 0;
  std::vector<OpenOp> open;                  // recorded ops currently running, innermost last
  std::vector<std::string> modules;          // module scopes, innermost last
  std::vector<Phase> phases;                 // phase scopes, innermost last
  std::vector<ScopeKind> user_scopes;        // every open USER_SCOPE, to pair exits with entries
  std::mutex mutex;                          // guards finished
  std::vector<OpRecord> finished;
};

namespace {

void describe_inputs(const at::RecordFunction& fn, OpRecord& r) {
  for (const c10::IValue& v : fn.inputs()) {
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (!t.defined()) {
        r.input_dtypes.emplace_back();
        r.input_shapes.emplace_back();
        continue;
      }
      // A Python or C++ number wrapped in a 0-dim tensor takes no part in type
      // promotion; marking it keeps it out of the autocast classification.
      const bool wrapped = t.unsafeGetTensorImpl()->is_wrapped_number();
      r.input_dtypes.emplace_back((wrapped ? kWrappedNumberPrefix : std::string()) + dtype_name(t.scalar_type()));
      r.input_shapes.emplace_back(t.sizes().begin(), t.sizes().end());
    } else if (v.isTensorList()) {
      // Lists (cat, stack, foreach ops) are flattened: their dtypes decide promotion.
      for (const at::Tensor& t : v.toTensorList()) {
        r.input_dtypes.emplace_back(t.defined() ? dtype_name(t.scalar_type()) : "");
        r.input_shapes.emplace_back(t.defined() ? Shape(t.sizes().begin(), t.sizes().end()) : Shape{});
      }
    } else {
      r.input_dtypes.emplace_back();
      r.input_shapes.emplace_back();
    }
  }
}

int64_t describe_outputs(const at::RecordFunction& fn, OpRecord& r) {
  int64_t bytes = 0;
  auto add = [&](const at::Tensor& t) {
    if (!t.defined()) return;
    r.output_dtypes.emplace_back(dtype_name(t.scalar_type()));
    bytes += static_cast<int64_t>(t.numel()) * static_cast<int64_t>(t.element_size());
  };
  for (const c10::IValue& v : fn.outputs()) {
    if (v.isTensor()) {
      add(v.toTensor());
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList()) add(t);
    } else if (v.isTuple()) {
      for (const c10::IValue& e : v.toTupleRef().elements())
        if (e.isTensor()) add(e.toTensor());
    }
  }
  return bytes;
}

bool autocast_enabled_anywhere() {
  // The TLS check the autocast kernels themselves use: an op entered while an
  // autocast key is active will have its inputs cast by autocast.
  return !c10::impl::tls_is_dispatch_key_excluded(c10::DispatchKey::AutocastCPU) ||
         !c10::impl::tls_is_dispatch_key_excluded(c10::DispatchKey::AutocastCUDA);
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  OpObserver* self = g_active.load(std::memory_order_acquire);
  if (self == nullptr) return nullptr;
  OpObserver::ThreadState& ts = self->thread_state();
  const char* name = fn.name();
  if (fn.scope() == at::RecordScope::USER_SCOPE) {
    const std::string_view n(name);
    if (starts_with(n, kModulePrefix)) {
      ts.modules.emplace_back(n.substr(kModulePrefix.size()));
      ts.user_scopes.push_back(ScopeKind::kModule);
    } else if (starts_with(n, kPhasePrefix)) {
      const std::string_view phase = n.substr(kPhasePrefix.size());
      ts.phases.push_back(phase == "forward"    ? Phase::kForward
                          : phase == "backward" ? Phase::kBackward
                          : phase == "optimizer" ? Phase::kOptimizer
                                                 : Phase::kOther);
      ts.user_scopes.push_back(ScopeKind::kPhase);
    } else {
      ts.user_scopes.push_back(ScopeKind::kOther);
    }
    return nullptr;
  }

  OpenOp op;
  OpRecord& r = op.record;
  r.id = self->next_id_.fetch_add(1, std::memory_order_relaxed);
  r.step = self->step_.load(std::memory_order_relaxed);
  r.name = name;
  r.sequence_nr = fn.seqNr();
  r.thread_id = ts.thread_number;
  r.depth = static_cast<uint32_t>(ts.open.size());
  // Autograd's engine wraps each node ("AddmmBackward0", scope BACKWARD_FUNCTION) in a
  // FUNCTION-scope "autograd::engine::evaluate_function: AddmmBackward0": both are containers.
  op.is_backward_node = fn.scope() == at::RecordScope::BACKWARD_FUNCTION ||
                        starts_with(r.name, "autograd::engine::evaluate_function");
  r.autograd_node = op.is_backward_node;
  op.is_cast = is_cast_op(r.name);
  op.autocast_on = autocast_enabled_anywhere();
  if (!ts.open.empty()) {
    const OpenOp& parent = ts.open.back();
    r.parent_id = parent.record.id;
    r.module = parent.record.module;
    r.phase = parent.record.phase;
    r.forward_op_id = parent.record.forward_op_id;
  } else {
    r.module = ts.modules.empty() ? std::string() : ts.modules.back();
    r.phase = ts.phases.empty() ? Phase::kOther : ts.phases.back();
  }
  if (op.is_backward_node) {
    // Autograd names its node after the forward op's sequence number: that op's module is this one's.
    r.phase = Phase::kBackward;
    std::lock_guard lock(self->forward_mutex_);
    auto it = self->forward_by_sequence_nr_.find(r.sequence_nr);
    if (it != self->forward_by_sequence_nr_.end()) {
      r.module = it->second.module;
      r.forward_op_id = it->second.op_id;
      op.backward_of_autocast_cast = it->second.autocast_cast;
    }
  } else if (r.sequence_nr >= 0 && r.phase != Phase::kBackward) {
    // Nested ops share their parent's number until one creates an autograd node:
    // the outermost op (first seen) names the module and the forward op.
    std::lock_guard lock(self->forward_mutex_);
    auto [it, inserted] = self->forward_by_sequence_nr_.try_emplace(r.sequence_nr);
    if (inserted) {
      it->second.op_id = r.id;
      it->second.module = r.module;
    }
  }
  describe_inputs(fn, r);
  if (self->hooks_) self->hooks_->push_external_id(r.id);
  r.start_ns = now_ns();
  ts.open.push_back(std::move(op));
  return nullptr;
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext*) {
  const int64_t end = now_ns();
  OpObserver* self = g_active.load(std::memory_order_acquire);
  if (self == nullptr) return;
  OpObserver::ThreadState& ts = self->thread_state();
  if (fn.scope() == at::RecordScope::USER_SCOPE) {
    if (ts.user_scopes.empty()) return;  // entered before the callback was registered
    const ScopeKind kind = ts.user_scopes.back();
    ts.user_scopes.pop_back();
    if (kind == ScopeKind::kModule && !ts.modules.empty()) ts.modules.pop_back();
    if (kind == ScopeKind::kPhase && !ts.phases.empty()) ts.phases.pop_back();
    return;
  }
  if (ts.open.empty()) return;  // entered before registration
  OpenOp op = std::move(ts.open.back());
  ts.open.pop_back();
  if (self->hooks_) self->hooks_->pop_external_id();
  OpRecord& r = op.record;
  r.end_ns = end;
  const int64_t out_bytes = describe_outputs(fn, r);
  CastContext context;
  if (!ts.open.empty()) {
    context.parent_entered_under_autocast = ts.open.back().autocast_on && !ts.open.back().is_cast;
    for (const OpenOp& o : ts.open) context.inside_cast = context.inside_cast || o.is_cast;
    for (auto it = ts.open.rbegin(); it != ts.open.rend(); ++it) {
      if (!it->is_backward_node) continue;
      context.backward_of_autocast_cast = it->backward_of_autocast_cast;
      break;
    }
  }
  r.category = op.is_backward_node ? OpCategory::kUnchanged
                                   : classify_op(r.name, r.input_dtypes, r.output_dtypes, context);
  if (r.category == OpCategory::kAutocastCast || r.category == OpCategory::kExplicitCast) r.cast_bytes = out_bytes;
  if (r.category == OpCategory::kAutocastCast && r.phase != Phase::kBackward && r.sequence_nr >= 0) {
    std::lock_guard lock(self->forward_mutex_);
    self->forward_by_sequence_nr_[r.sequence_nr].autocast_cast = true;
  }
  std::lock_guard lock(ts.mutex);
  ts.finished.push_back(std::move(r));
}

}  // namespace

std::atomic<uint64_t> OpObserver::next_serial_{1};

OpObserver::OpObserver() : serial_(next_serial_.fetch_add(1)) {}

OpObserver::~OpObserver() { end_step(); }

OpObserver::ThreadState& OpObserver::thread_state() {
  // One state per (thread, observer); the registry keeps it alive for collect().
  thread_local std::unordered_map<uint64_t, std::shared_ptr<ThreadState>> states;
  auto& slot = states[serial_];
  if (!slot) {
    slot = std::make_shared<ThreadState>();
    std::lock_guard lock(registry_mutex_);
    slot->thread_number = next_thread_number_++;
    threads_.push_back(slot);
  }
  return *slot;
}

void OpObserver::begin_step(int64_t step) {
  step_.store(step, std::memory_order_relaxed);
  if (handle_ != 0) return;
  OpObserver* expected = nullptr;
  if (!g_active.compare_exchange_strong(expected, this)) return;  // another observer is active
  {
    std::lock_guard lock(forward_mutex_);
    forward_by_sequence_nr_.clear();
  }
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit)
                                      .needsInputs(true)
                                      .needsOutputs(true)
                                      .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                                               at::RecordScope::USER_SCOPE}));
}

void OpObserver::end_step() {
  if (handle_ == 0) return;
  at::removeCallback(handle_);
  handle_ = 0;
  g_active.store(nullptr, std::memory_order_release);
}

std::vector<OpRecord> OpObserver::collect() {
  std::vector<OpRecord> all;
  std::lock_guard registry(registry_mutex_);
  for (auto& ts : threads_) {
    std::lock_guard lock(ts->mutex);
    std::move(ts->finished.begin(), ts->finished.end(), std::back_inserter(all));
    ts->finished.clear();
  }
  std::sort(all.begin(), all.end(), [](const OpRecord& a, const OpRecord& b) { return a.start_ns < b.start_ns; });
  return all;
}

}  // namespace ampscope::profiler
