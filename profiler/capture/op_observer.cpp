#include "profiler/capture/op_observer.h"

#include <ATen/SequenceNumber.h>
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>
#include <c10/core/ScalarType.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "engine/module_scope.h"
#include "profiler/analysis/op_classifier.h"
#include "profiler/capture/dtype_names.h"
#include "profiler/capture/interned_names.h"
#include "profiler/capture/spin_lock.h"

namespace ampscope::profiler {

namespace {

std::atomic<OpObserver*> g_active{nullptr};

constexpr std::string_view kModulePrefix = engine::kModuleScopePrefix;
constexpr std::string_view kPhasePrefix = "ampscope.phase:";
// FSDP's own record_function scopes: FSDP2's ("FSDP::all_gather (layers.0)",
// "FSDP::cast_forward_inputs", "FSDP::post_backward_reduce") and FSDP1's.
constexpr std::string_view kFsdpScopePrefixes[] = {"FSDP::", "FullyShardedDataParallel."};

// set_autocast_turned_off's devices, as NameFlag bits (kAutocastCpu, kAutocastCuda).
thread_local uint8_t t_autocast_turned_off = 0;

}  // namespace

namespace {

// "cuda", "cpu": that device's NameFlag bit (kAutocastCuda, kAutocastCpu); 0 for others.
uint8_t autocast_device_bit(std::string_view device_type) {
  return device_type == "cuda"  ? observer_detail::kAutocastCuda
         : device_type == "cpu" ? observer_detail::kAutocastCpu
                                : 0;
}

}  // namespace

void set_autocast_turned_off(const std::vector<std::string>& device_types) {
  uint8_t devices = 0;
  for (const std::string& type : device_types) devices |= autocast_device_bit(type);
  t_autocast_turned_off = devices;
}

bool autocast_decides(std::string_view op, std::string_view device_type) {
  const uint8_t flags = observer_detail::NameTable::instance().intern(op).first.flags;
  return observer_detail::autocast_decides_on(flags, autocast_device_bit(device_type)) != 0;
}

// Types the per-thread state holds (a named namespace: that state is a member of OpObserver).
namespace observer_detail {

constexpr int8_t kNoTensor = -1;  // a non-tensor argument or an undefined tensor: dtype ""

struct TensorDesc {
  int8_t dtype = kNoTensor;  // c10::ScalarType
  bool wrapped = false;      // a number wrapped in a 0-dim tensor
  uint16_t rank = 0;         // inputs: how many of the op's dims are this tensor's
};

bool is_floating(const TensorDesc& t) {
  if (t.wrapped || t.dtype == kNoTensor) return false;
  const auto type = static_cast<c10::ScalarType>(t.dtype);
  return type == c10::kFloat || type == c10::kHalf || type == c10::kBFloat16 || type == c10::kDouble;
}

struct RawOp {
  uint64_t id = 0, parent_id = 0, forward_op_id = 0;
  int64_t step = 0, sequence_nr = -1;
  uint64_t start_ticks = 0, end_ticks = 0;  // tick_clock.h
  int64_t out_bytes = 0;  // what its outputs take: the cast bytes, if it turns out to be a cast
  uint32_t name = 0, module = 0, depth = 0;
  uint32_t first_tensor = 0, n_inputs = 0, n_outputs = 0;  // inputs, then outputs
  uint32_t first_dim = 0;
  Phase phase = Phase::kOther;
  bool autograd_node = false;
  // The CastContext, fixed when the op is entered; classified by to_records().
  bool parent_entered_under_autocast = false, inside_cast = false, backward_of_autocast_cast = false;
  bool backward_of_promotion = false;
  // Autocast acted on it (CastContext::autocast_acted): the op is on its lists for a device
  // it was on for, or an autocast cast ran inside it.
  bool on_autocast_list = false, autocast_cast_inside = false;
  bool autocast_promote_policy = false;  // on the list under its promote policy (CastContext)
  bool autocast_turned_off = false;       // on the lists of a device the script turned autocast off for
  int8_t autocast_cast_to = kNoTensor;    // the dtype the first autocast cast inside it made (CastContext)
  bool forward_by_node = false;  // a top-level op outside every phase that autograd recorded: see on_exit
  bool in_sharding_scope = false;  // entered inside one of FSDP's scopes (CastContext)
  // The last inputs are this many out= tensors (sum.IntList_out's fp32 `out` under a bf16
  // mean): written, not read, so they take no part in promotion. Listed as inputs still, as
  // torch.profiler lists them.
  uint8_t out_arguments = 0;
};

// A recorded op still running on a thread's stack.
struct OpenOp {
  RawOp raw;
  uint32_t pending_tensor = 0, pending_dim = 0;  // where its inputs start in the pending arrays
  bool autocast_on = false;  // autocast was enabled for some device when the op was entered
  bool is_cast = false;
  bool is_backward_node = false;
  bool node_of_autocast_cast = false;  // a backward node of an autocast-inserted cast
  bool node_of_promotion = false;      // a backward node of an op that promoted mixed inputs
  // A cast an op's own implementation made (math attention's fp16 -> fp32), or the backward
  // node of one: no autocast decision and no cast the code asked for.
  bool internal_cast = false, node_of_internal_cast = false;
  uint32_t modules_open = 0;           // the thread's module scopes open when it was entered
  uint32_t phases_open = 0;            // and its phase scopes
  bool holds_autocast_cast = false;    // a custom Function's forward in which autocast cast something
  bool origin_taken = false;           // an engine scope given its node's module and cast context
  const void* last_input = nullptr;    // the last input's TensorImpl: an out= tensor if an output is it
};

// What a user scope on the stack was, so its exit undoes the right thing.
enum class ScopeKind : uint8_t { kModule, kPhase, kSharding, kOther };

}  // namespace observer_detail

using namespace observer_detail;

struct OpBatch::Part {
  uint64_t thread_number = 0;
  std::vector<RawOp> ops;
  std::vector<TensorDesc> tensors;
  std::vector<int64_t> dims;  // input shapes, one op after another
  uint64_t over_budget = 0;   // ops finished but not kept: the thread's step budget was spent
};

namespace observer_detail {

// Buffers of parts already read, kept with their capacity. A thread's buffer grows
// to a step's ops (about 1.2 MB for 8,000 ops); a fresh one each step would be
// fresh pages, faulted in one by one on the training thread as the step's ops are
// written. The training thread takes one per recording thread per step; the
// profiler's worker gives them back once it has made the records.
class SpareParts {
 public:
  OpBatch::Part take() {
    std::lock_guard lock(mutex_);
    if (parts_.empty()) return {};
    OpBatch::Part part = std::move(parts_.back());
    parts_.pop_back();
    return part;
  }
  void give_back(OpBatch::Part&& part) {
    part.ops.clear();
    part.tensors.clear();
    part.dims.clear();
    part.over_budget = 0;
    std::lock_guard lock(mutex_);
    if (parts_.size() < kKept) parts_.push_back(std::move(part));
  }

 private:
  static constexpr size_t kKept = 8;  // the worker may be a few steps behind
  std::mutex mutex_;
  std::vector<OpBatch::Part> parts_;
};

}  // namespace observer_detail

struct OpObserver::ThreadState {
  uint64_t thread_number = 0;
  uint64_t generation = 0;
  NameCache names;
  std::vector<OpenOp> open;            // recorded ops currently running, innermost last
  std::vector<uint32_t> modules;       // module scopes (interned paths), innermost last
  std::vector<Phase> phases;           // phase scopes, innermost last
  std::vector<ScopeKind> user_scopes;  // every open USER_SCOPE, to pair exits with entries
  uint32_t sharding_scopes = 0;        // of which FSDP's
  uint32_t torchscript_frames = 0;     // TorchScript functions running on this thread
  uint64_t entered_this_step = 0;      // ops recorded since this registration (the step budget)
  uint32_t open_over_budget = 0;       // ops entered over budget and still running (innermost)
  // Open ops' inputs, innermost last (a stack, as `open` is), reused from op to op.
  std::vector<TensorDesc> pending_tensors;
  std::vector<int64_t> pending_dims;
  SpinLock finished_lock;  // guards finished: taken on every op
  OpBatch::Part finished;
  // How much take() found last (registry_mutex_): the size of the next buffer it hands over.
  struct Sizes {
    size_t ops = 0, tensors = 0, dims = 0;
  } taken;

  void restart(uint64_t new_generation) {
    generation = new_generation;
    open.clear();
    modules.clear();
    phases.clear();
    user_scopes.clear();
    sharding_scopes = 0;
    torchscript_frames = 0;
    entered_this_step = 0;
    open_over_budget = 0;
    pending_tensors.clear();
    pending_dims.clear();
  }
};

// Ops by the sequence number of the autograd node they created (the outermost op
// around its creation): that op's module is the backward node's. Forward ops, and the
// ops of a backward that builds a graph (create_graph: a gradient penalty), whose
// nodes the next backward runs. Numbers count up per thread, so a number names a
// node only with its thread (the node's forwardThreadId): a step's nodes from the
// training thread fill a dense range, a vector from the step's first number; other
// threads' (CUDA's autograd device threads under create_graph) go in a map.
struct OpObserver::SequenceTable {
  struct Origin {
    uint64_t op_id = 0;
    uint32_t module = 0;
    bool autocast_cast = false;  // an autocast cast made it: its backward node casts the gradient back
    bool holds_autocast_cast = false;  // a custom Function's forward in which autocast cast something
    // It ran in the precision autocast chose (on autocast's lists, or inside an op that is): a
    // kernel that hands back another dtype's gradient (CPU LSTM's bf16 layers give fp32) has the
    // engine cast it to the input's, a cost of autocast's choice.
    bool under_autocast = false;
    bool promoted = false;  // it promoted mixed inputs: the engine casts a narrower input's gradient back
    bool internal_cast = false;  // an op's implementation cast: its backward node's cast back is the op's too
    bool set = false;
  };
  static constexpr int64_t kDenseSpan = int64_t{1} << 20;
  struct Key {
    uint64_t thread = 0;
    int64_t seq = 0;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const noexcept {
      return std::hash<int64_t>()(k.seq) ^ (std::hash<uint64_t>()(k.thread) * 0x9e3779b97f4a7c15ULL);
    }
  };

  SpinLock table_lock;  // taken by every op that makes a node and every backward node
  uint64_t dense_thread = 0;
  int64_t base = -1;
  std::vector<Origin> dense;
  std::unordered_map<Key, Origin, KeyHash> sparse;

  void clear() {
    std::lock_guard lock(table_lock);
    base = -1;
    dense.clear();
    sparse.clear();
  }
  // Ops that enclose one another and the node's creation exit inner first: the last wins.
  void record(uint64_t thread, int64_t seq, uint64_t op_id, uint32_t module, bool autocast_cast,
              bool holds_autocast_cast, bool under_autocast, bool promoted, bool internal_cast) {
    std::lock_guard lock(table_lock);
    if (base < 0) {
      base = seq;
      dense_thread = thread;
    }
    Origin* o = nullptr;
    if (thread == dense_thread && seq >= base && seq - base < kDenseSpan) {
      const auto i = static_cast<size_t>(seq - base);
      if (i >= dense.size()) dense.resize(std::max(i + 1, dense.size() * 2));
      o = &dense[i];
    } else {
      o = &sparse[Key{thread, seq}];
    }
    o->op_id = op_id;
    o->module = module;
    o->autocast_cast = o->autocast_cast || autocast_cast;
    o->holds_autocast_cast = o->holds_autocast_cast || holds_autocast_cast;
    o->under_autocast = o->under_autocast || under_autocast;
    o->promoted = o->promoted || promoted;
    o->internal_cast = o->internal_cast || internal_cast;
    o->set = true;
  }
  std::optional<Origin> find(uint64_t thread, int64_t seq) {
    if (seq < 0) return std::nullopt;
    std::lock_guard lock(table_lock);
    if (base >= 0 && thread == dense_thread && seq >= base && seq - base < static_cast<int64_t>(dense.size())) {
      const Origin& o = dense[static_cast<size_t>(seq - base)];
      if (o.set) return o;
    }
    auto it = sparse.find(Key{thread, seq});
    return it == sparse.end() ? std::nullopt : std::optional(it->second);
  }
};

namespace {

// The inputs' descriptions; returns the last input's TensorImpl (nullptr where it is no tensor).
const void* describe_inputs(const at::RecordFunction& fn, std::vector<TensorDesc>& tensors,
                            std::vector<int64_t>& dims) {
  auto add = [&](const at::Tensor& t, bool may_be_wrapped) {
    if (!t.defined()) {
      tensors.emplace_back();
      return;
    }
    const c10::IntArrayRef sizes = t.sizes();
    // A Python or C++ number wrapped in a 0-dim tensor takes no part in type
    // promotion; marking it keeps it out of the autocast classification.
    tensors.push_back({static_cast<int8_t>(t.scalar_type()),
                       may_be_wrapped && t.unsafeGetTensorImpl()->is_wrapped_number(),
                       static_cast<uint16_t>(sizes.size())});
    dims.insert(dims.end(), sizes.begin(), sizes.end());
  };
  const void* last = nullptr;
  for (const c10::IValue& v : fn.inputs()) {
    last = nullptr;
    if (v.isTensor()) {
      add(v.toTensor(), true);
      last = v.toTensor().defined() ? v.toTensor().unsafeGetTensorImpl() : nullptr;
    } else if (v.isTensorList()) {
      // Lists (cat, stack, foreach ops) are flattened: their dtypes decide promotion.
      for (const c10::IValue& e : v.toListRef()) {
        if (e.isTensor()) add(e.toTensor(), false);
        else tensors.emplace_back();
      }
    } else {
      tensors.emplace_back();
    }
  }
  return last;
}

// The outputs' descriptions and bytes; `returns_input` is set where one of them is the tensor `input`.
int64_t describe_outputs(const at::RecordFunction& fn, std::vector<TensorDesc>& tensors, const void* input,
                         bool& returns_input) {
  int64_t bytes = 0;
  auto add = [&](const c10::IValue& v) {
    if (!v.isTensor()) return;
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) return;
    returns_input = returns_input || (input != nullptr && t.unsafeGetTensorImpl() == input);
    tensors.push_back({static_cast<int8_t>(t.scalar_type()), false, 0});
    bytes += static_cast<int64_t>(t.numel()) * static_cast<int64_t>(t.element_size());
  };
  for (const c10::IValue& v : fn.outputs()) {
    if (v.isTensor()) {
      add(v);
    } else if (v.isTensorList()) {
      for (const c10::IValue& e : v.toListRef()) add(e);
    } else if (v.isTuple()) {
      for (const c10::IValue& e : v.toTupleRef().elements()) add(e);
    }
  }
  return bytes;
}

// classify_op()'s rule for casts, on dtype codes: whether to_records() will call
// this op an autocast cast. The backward node it creates then casts a gradient back.
bool is_autocast_cast(const RawOp& r, const TensorDesc* tensors) {
  if (r.inside_cast || r.n_inputs == 0 || r.n_outputs == 0) return false;
  const TensorDesc& in = tensors[0];
  const TensorDesc& out = tensors[r.n_inputs];
  if (!is_floating(in) || !is_floating(out) || in.dtype == out.dtype) return false;
  return r.parent_entered_under_autocast || r.backward_of_autocast_cast;
}

FloatKind float_kind(const TensorDesc& t) {
  if (!is_floating(t)) return {};
  const auto type = static_cast<c10::ScalarType>(t.dtype);
  return {type == c10::kDouble ? 64 : type == c10::kFloat ? 32 : 16, type == c10::kBFloat16};
}

// classify_op()'s promotion rule, on dtype codes: whether to_records() will call the op
// promoted. Its backward node then hands the engine a gradient to cast back.
bool is_promotion(const RawOp& r, const TensorDesc* tensors) {
  const uint32_t read = r.n_inputs - r.out_arguments;
  if (read < 2 || r.n_outputs == 0) return false;
  FloatMix mix;
  for (uint32_t i = 0; i < read; ++i) mix.add(float_kind(tensors[i]));
  for (uint32_t i = r.n_inputs; i < r.n_inputs + r.n_outputs; ++i)
    if (is_floating(tensors[i])) return mix.promotes_to(float_kind(tensors[i]));
  return false;
}

// How many of the op's last inputs are out= tensors, asked of its schema only where it returns
// its last input and its floating inputs differ in dtype (a copy of the schema is too dear for
// every op, or every LayerNorm). 0 where an out= argument is a list (flattened into as many
// inputs: rare, left as read).
uint8_t out_arguments(const at::RecordFunction& fn, const RawOp& r, const TensorDesc* tensors) {
  int8_t first = kNoTensor;
  bool mixed = false;
  for (uint32_t i = 0; i < r.n_inputs && !mixed; ++i) {
    if (!is_floating(tensors[i])) continue;
    if (first == kNoTensor) first = tensors[i].dtype;
    mixed = tensors[i].dtype != first;
  }
  if (!mixed) return 0;
  const std::optional<c10::FunctionSchema> schema = fn.operator_schema();
  if (!schema) return 0;
  uint8_t outs = 0;
  for (const c10::Argument& a : schema->arguments()) {
    if (!a.is_out()) continue;
    if (a.type()->kind() != c10::TypeKind::TensorType) return 0;
    ++outs;
  }
  return outs < r.n_inputs ? outs : 0;
}

// The devices autocast is on for, as NameFlag bits (kAutocastCpu, kAutocastCuda): the TLS
// check the autocast kernels themselves use. An op entered while an autocast key is
// active, and on that device's lists, has its inputs cast by autocast.
uint8_t autocast_enabled_devices() {
  const c10::DispatchKeySet excluded = c10::impl::tls_local_dispatch_key_set().excluded_;
  return (excluded.has(c10::DispatchKey::AutocastCPU) ? 0 : kAutocastCpu) |
         (excluded.has(c10::DispatchKey::AutocastCUDA) ? 0 : kAutocastCuda);
}

// The module path of the TorchScript code this thread is running, as our scopes
// name modules ("blocks.0.lin"). The interpreter describes its frames and the
// inlined call stack of the node it runs as "TOP(Net)::forward",
// "blocks(Sequential)::forward", "0(Inner)::forward", ...: instance names after
// the top module, without "SELF" (a method of the same module), free functions
// ("::f", "CALL_FUNCTION::f...") and instances it cannot name. It builds a few
// strings per frame, so only top-level ops inside TorchScript ask.
uint32_t torchscript_module(NameCache& names) {
  const std::vector<std::string> frames = torch::jit::currentModuleHierarchy();
  std::string path;
  for (size_t i = 1; i < frames.size(); ++i) {
    const std::string_view frame = frames[i];
    const size_t paren = frame.find('(');
    if (paren == 0 || paren == std::string_view::npos) continue;
    const std::string_view instance = frame.substr(0, paren);
    if (instance == "SELF" || instance == "INSTANCE_NAME_UNKNOWN" || instance.starts_with("CALL_FUNCTION::"))
      continue;
    if (!path.empty()) path += '.';
    path += instance;
  }
  return path.empty() ? 0 : names.lookup(path).first.id;
}

void enter_user_scope(OpObserver::ThreadState& ts, std::string_view name) {
  if (name.starts_with(kModulePrefix)) {
    ts.modules.push_back(ts.names.lookup(name.substr(kModulePrefix.size())).first.id);
    ts.user_scopes.push_back(ScopeKind::kModule);
  } else if (name.starts_with(kPhasePrefix)) {
    ts.phases.push_back(parse_phase(name.substr(kPhasePrefix.size())).value_or(Phase::kOther));
    ts.user_scopes.push_back(ScopeKind::kPhase);
  } else if (std::ranges::any_of(kFsdpScopePrefixes, [&](std::string_view p) { return name.starts_with(p); })) {
    ++ts.sharding_scopes;
    ts.user_scopes.push_back(ScopeKind::kSharding);
  } else {
    ts.user_scopes.push_back(ScopeKind::kOther);
  }
}

void exit_user_scope(OpObserver::ThreadState& ts) {
  if (ts.user_scopes.empty()) return;  // entered before the callback was registered
  const ScopeKind kind = ts.user_scopes.back();
  ts.user_scopes.pop_back();
  if (kind == ScopeKind::kModule && !ts.modules.empty()) ts.modules.pop_back();
  if (kind == ScopeKind::kPhase && !ts.phases.empty()) ts.phases.pop_back();
  if (kind == ScopeKind::kSharding && ts.sharding_scopes > 0) --ts.sharding_scopes;
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  OpObserver* self = g_active.load(std::memory_order_acquire);
  if (self == nullptr) return nullptr;
  OpObserver::ThreadState& ts = self->thread_state();
  const at::RecordScope scope = fn.scope();
  if (scope == at::RecordScope::USER_SCOPE) {
    enter_user_scope(ts, fn.name());
    return nullptr;
  }
  if (scope == at::RecordScope::TORCHSCRIPT_FUNCTION) {
    ++ts.torchscript_frames;
    return nullptr;
  }

  // Over the step's budget: not recorded. Ops nest, so every op entered from now
  // on exits before any op recorded earlier: a count pairs the exits.
  if (ts.entered_this_step >= self->step_op_budget_.load(std::memory_order_relaxed)) {
    ++ts.open_over_budget;
    return nullptr;
  }
  ++ts.entered_this_step;
  const NameInfo name = ts.names.lookup(fn.name());
  const size_t depth = ts.open.size();
  OpenOp& op = ts.open.emplace_back();
  OpenOp* parent = depth > 0 ? &ts.open[depth - 1] : nullptr;
  RawOp& r = op.raw;
  r.id = self->next_id_.fetch_add(1, std::memory_order_relaxed);
  r.step = self->step_.load(std::memory_order_relaxed);
  r.name = name.id;
  r.sequence_nr = fn.seqNr();
  r.depth = static_cast<uint32_t>(depth);
  r.in_sharding_scope = ts.sharding_scopes > 0;
  op.is_backward_node = scope == at::RecordScope::BACKWARD_FUNCTION || (name.flags & kEvaluateFunction) != 0;
  // Containers: a backward node runs its ops, and so does a custom autograd.Function's
  // forward (custom_fwd's casts, its matmul in fp32; a checkpointed block's layers),
  // recorded with the number of the node it makes (PythonDispatchMode's record has none).
  r.autograd_node = op.is_backward_node || (scope == at::RecordScope::FUNCTION &&
                                            (name.flags & kFunctionForward) != 0 && r.sequence_nr >= 0);
  op.is_cast = (name.flags & kCastOp) != 0;
  const uint8_t autocast_devices = autocast_enabled_devices();
  op.autocast_on = autocast_devices != 0;
  r.on_autocast_list = (name.flags & autocast_devices) != 0;
  r.autocast_promote_policy = ((name.flags >> kPromoteShift) & autocast_devices) != 0;
  r.autocast_turned_off = autocast_decides_on(name.flags, t_autocast_turned_off & ~autocast_devices) != 0;
  op.modules_open = static_cast<uint32_t>(ts.modules.size());
  op.phases_open = static_cast<uint32_t>(ts.phases.size());
  if (parent != nullptr) {
    r.parent_id = parent->raw.id;
    // An op's inner ops are its module's; but a container's (a custom Function's forward, a
    // backward node) run modules of their own: a checkpointed block's layers, and their
    // recomputation inside the checkpoint's backward node, or (use_reentrant=False) inside the
    // first backward node that needs a saved tensor. That is forward code: none of the node's
    // gradient work (an RMS norm's .float() recomputed in a promoted mul's node is the code's).
    const bool module_inside = parent->raw.autograd_node && ts.modules.size() > parent->modules_open;
    const bool node_work = parent->is_backward_node && !module_inside;
    r.module = module_inside ? ts.modules.back() : parent->raw.module;
    // An op takes its parent's phase, unless a phase was opened inside the parent: a
    // checkpointed block recomputed inside a backward node (the capture opens "recompute").
    r.phase = ts.phases.size() > parent->phases_open ? ts.phases.back() : parent->raw.phase;
    r.forward_op_id = parent->raw.forward_op_id;
    // Autocast casts the inputs of the ops on its lists (its kernel runs before theirs). A cast
    // directly in a container (a custom Function's forward, checkpoint's) is the code's, autocast
    // on or not: an RMS norm's .float() in a checkpointed layer, custom_fwd(cast_inputs=...)'s.
    r.parent_entered_under_autocast = !parent->is_cast && parent->raw.on_autocast_list;
    // Any other cast directly inside an ATen op is the op's implementation choosing its
    // precision (math attention computes fp16 in fp32; a 0-dim fp32 operand cast to an fp16
    // one's type, autocast on or not): the compiled graphs' decomposed-op rule, for eager.
    // Python code calls its casts at the top level, and a custom Function's forward is a container.
    op.internal_cast = op.is_cast && !parent->is_cast && !parent->raw.autograd_node &&
                       !r.parent_entered_under_autocast && !parent->raw.inside_cast;
    r.inside_cast = parent->raw.inside_cast || parent->is_cast || op.internal_cast ||
                    (node_work && parent->node_of_internal_cast);
    // The innermost backward node around the op decides.
    r.backward_of_autocast_cast = parent->is_backward_node ? node_work && parent->node_of_autocast_cast
                                                           : parent->raw.backward_of_autocast_cast;
    r.backward_of_promotion =
        parent->is_backward_node ? node_work && parent->node_of_promotion : parent->raw.backward_of_promotion;
  } else {
    r.module = ts.modules.empty() ? 0 : ts.modules.back();
    r.phase = ts.phases.empty() ? Phase::kOther : ts.phases.back();
    // A user's TorchScript model has no scopes of ours: ask its interpreter.
    if (r.module == 0 && ts.torchscript_frames > 0 && !op.is_backward_node) r.module = torchscript_module(ts.names);
  }
  if (op.is_backward_node) {
    // Autograd numbers its node as the forward op that created it: that op's module is this one's.
    r.phase = Phase::kBackward;
    if (const auto origin = self->node_creators_->find(fn.forwardThreadId(), r.sequence_nr)) {
      r.module = origin->module;
      r.forward_op_id = origin->op_id;
      op.node_of_autocast_cast = origin->autocast_cast;
      op.node_of_promotion = origin->promoted;
      op.node_of_internal_cast = origin->internal_cast;
      // The engine's "evaluate_function: X" scope (no number of its own) holds node X and,
      // after it, the engine's work on X's outputs: a broadcast input's gradient summed to
      // its shape (a Linear's bias under addmm), gradients accumulated. Those are X's module's.
      // A cast there is the engine's, of a gradient back to its input's dtype: autocast's
      // when X is an autocast cast, or a custom Function in whose forward autocast cast
      // something (its backward, under custom_bwd, hands back gradients in autocast's dtype),
      // or X's forward ran in the precision autocast chose (CPU LSTM's bf16 layers);
      // the promotion's when X promoted mixed inputs (the fp16 input of fp32 + fp16 gets its
      // gradient cast back to fp16); the code's otherwise (a custom Function's fp16 input,
      // cast to fp32 in its forward by custom_fwd(cast_inputs=...)).
      // Once, for X: the scope took its parent's module when X runs in a backward nested in a
      // node (checkpoint(use_reentrant=True)'s runs the block's nodes inside its own).
      if (parent != nullptr && parent->is_backward_node && !parent->origin_taken && parent->raw.sequence_nr < 0) {
        parent->origin_taken = true;
        parent->raw.module = origin->module;
        parent->node_of_autocast_cast = origin->autocast_cast || origin->holds_autocast_cast || origin->under_autocast;
        parent->node_of_promotion = origin->promoted;
      }
    }
  }
  op.pending_tensor = static_cast<uint32_t>(ts.pending_tensors.size());
  op.pending_dim = static_cast<uint32_t>(ts.pending_dims.size());
  op.last_input = describe_inputs(fn, ts.pending_tensors, ts.pending_dims);
  r.n_inputs = static_cast<uint32_t>(ts.pending_tensors.size() - op.pending_tensor);
  if (self->hooks_) self->hooks_->push_external_id(r.id);
  r.start_ticks = read_ticks();
  return nullptr;
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext*) {
  const uint64_t end = read_ticks();
  OpObserver* self = g_active.load(std::memory_order_acquire);
  if (self == nullptr) return;
  OpObserver::ThreadState& ts = self->thread_state();
  const at::RecordScope scope = fn.scope();
  if (scope == at::RecordScope::USER_SCOPE) {
    exit_user_scope(ts);
    return;
  }
  if (scope == at::RecordScope::TORCHSCRIPT_FUNCTION) {
    if (ts.torchscript_frames > 0) --ts.torchscript_frames;
    return;
  }
  if (ts.open_over_budget > 0) {
    --ts.open_over_budget;
    std::lock_guard lock(ts.finished_lock);
    ++ts.finished.over_budget;
    return;
  }
  if (ts.open.empty()) return;  // entered before registration
  if (self->hooks_) self->hooks_->pop_external_id();
  OpenOp& op = ts.open.back();
  RawOp& r = op.raw;
  r.end_ticks = end;
  bool returns_last_input = false;
  r.out_bytes = describe_outputs(fn, ts.pending_tensors, op.last_input, returns_last_input);
  r.n_outputs = static_cast<uint32_t>(ts.pending_tensors.size() - op.pending_tensor - r.n_inputs);
  // The op (or one inside it) created the autograd node with its number iff the
  // thread's counter moved past it. Ops that create none (no input needs a
  // gradient, or TorchScript's differentiable graphs, which run detached) share
  // the number of a later node and must not claim it.
  // A backward's ops create nodes only under create_graph (grad mode on).
  const TensorDesc* const described = ts.pending_tensors.data() + op.pending_tensor;
  if (returns_last_input && !op.is_cast && r.n_inputs >= 2) r.out_arguments = out_arguments(fn, r, described);
  const bool autocast_cast = op.is_cast && is_autocast_cast(r, described);
  if (!op.is_backward_node && r.sequence_nr >= 0 &&
      at::sequence_number::peek() > static_cast<uint64_t>(r.sequence_nr)) {
    self->node_creators_->record(fn.threadId(), r.sequence_nr, r.id, r.module, autocast_cast,
                                 op.holds_autocast_cast, r.on_autocast_list || r.parent_entered_under_autocast,
                                 !op.is_cast && is_promotion(r, described),
                                 op.internal_cast);
    // Code outside every phase (a loss computed after the model's call, outside autocast as
    // accelerate and fp32 loops have it; a regularisation term; a loss divided for
    // accumulation) that autograd recorded is the forward pass: its backward is the step's.
    // Ops it records nothing for (data moved, metrics, .item()) stay "other". Its inner ops
    // took "other" from it at their entry: to_records() gives them its phase.
    if (r.depth == 0 && op.phases_open == 0 && r.phase == Phase::kOther) {
      r.phase = Phase::kForward;
      r.forward_by_node = true;
    }
  }
  // Autocast acted on every op around its cast, up to the container the cast runs in (the
  // first cast's walk reaches it; later ones stop at an op already marked).
  if (autocast_cast) {
    for (size_t i = ts.open.size() - 1; i-- > 0;) {
      OpenOp& outer = ts.open[i];
      if (outer.raw.autograd_node) {
        outer.holds_autocast_cast = outer.holds_autocast_cast || !outer.is_backward_node;
        break;
      }
      if (outer.raw.autocast_cast_inside) break;
      outer.raw.autocast_cast_inside = true;
      outer.raw.autocast_cast_to = described[r.n_inputs].dtype;
    }
  }
  const auto tensors = ts.pending_tensors.begin() + op.pending_tensor;
  const auto dims = ts.pending_dims.begin() + op.pending_dim;
  {
    std::lock_guard lock(ts.finished_lock);
    OpBatch::Part& out = ts.finished;
    r.first_tensor = static_cast<uint32_t>(out.tensors.size());
    r.first_dim = static_cast<uint32_t>(out.dims.size());
    out.tensors.insert(out.tensors.end(), tensors, ts.pending_tensors.end());
    out.dims.insert(out.dims.end(), dims, ts.pending_dims.end());
    out.ops.push_back(r);
  }
  ts.pending_tensors.resize(op.pending_tensor);
  ts.pending_dims.resize(op.pending_dim);
  ts.open.pop_back();
}

// By ScalarType code: the plain name and the wrapped number's.
const std::string& dtype_text(const TensorDesc& t) {
  static const auto names = [] {
    std::vector<std::array<std::string, 2>> v;
    for (int i = 0; i < static_cast<int>(c10::ScalarType::NumOptions); ++i) {
      const std::string name = dtype_name(static_cast<c10::ScalarType>(i));
      v.push_back({name, kWrappedNumberPrefix + name});
    }
    return v;
  }();
  static const std::string none;
  if (t.dtype < 0 || static_cast<size_t>(t.dtype) >= names.size()) return none;
  return names[static_cast<size_t>(t.dtype)][t.wrapped ? 1 : 0];
}

}  // namespace

OpBatch::OpBatch() = default;
OpBatch::~OpBatch() { give_back_parts(); }
OpBatch::OpBatch(OpBatch&&) noexcept = default;
OpBatch& OpBatch::operator=(OpBatch&& other) noexcept {
  if (this != &other) {
    give_back_parts();
    parts_ = std::move(other.parts_);
    ticks_ = other.ticks_;
    spares_ = std::move(other.spares_);
  }
  return *this;
}

void OpBatch::give_back_parts() {
  if (spares_)
    for (Part& part : parts_) spares_->give_back(std::move(part));
  parts_.clear();
}

size_t OpBatch::size() const {
  size_t n = 0;
  for (const Part& p : parts_) n += p.ops.size();
  return n;
}

uint64_t OpBatch::over_budget() const {
  uint64_t n = 0;
  for (const Part& p : parts_) n += p.over_budget;
  return n;
}

std::vector<OpRecord> OpBatch::to_records() && {
  std::vector<OpRecord> all;
  if (parts_.empty()) return all;
  const std::vector<std::string_view> names = NameTable::instance().snapshot();
  // Sorted before the records are made: moving an OpRecord costs more than a pointer.
  std::vector<std::pair<const RawOp*, const Part*>> order;
  order.reserve(size());
  for (const Part& part : parts_)
    for (const RawOp& op : part.ops) order.emplace_back(&op, &part);
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first->start_ticks < b.first->start_ticks; });
  all.reserve(order.size());
  std::unordered_set<uint64_t> forward_by_node;  // ops in the forward for what autograd recorded, and theirs
  for (const auto& [raw, part] : order) {
    const RawOp& op = *raw;
    OpRecord& r = all.emplace_back();
    r.id = op.id;
    r.parent_id = op.parent_id;
    r.step = op.step;
    r.name = names[op.name];
    r.phase = op.phase;
    // A parent starts before its ops: in this order its phase is known when theirs is made.
    if (op.forward_by_node) {
      forward_by_node.insert(op.id);
    } else if (op.phase == Phase::kOther && !forward_by_node.empty() && forward_by_node.contains(op.parent_id)) {
      r.phase = Phase::kForward;
      forward_by_node.insert(op.id);
    }
    r.module = names[op.module];
    r.sequence_nr = op.sequence_nr;
    r.forward_op_id = op.forward_op_id;
    r.depth = op.depth;
    r.autograd_node = op.autograd_node;
    r.thread_id = part->thread_number;
    r.start_ns = ticks_.to_ns(op.start_ticks);
    r.end_ns = ticks_.to_ns(op.end_ticks);
    const TensorDesc* t = part->tensors.data() + op.first_tensor;
    const int64_t* d = part->dims.data() + op.first_dim;
    r.input_dtypes.reserve(op.n_inputs);
    r.input_shapes.reserve(op.n_inputs);
    for (uint32_t i = 0; i < op.n_inputs; ++i) {
      r.input_dtypes.push_back(dtype_text(t[i]));
      r.input_shapes.emplace_back(d, d + t[i].rank);
      d += t[i].rank;
    }
    r.output_dtypes.reserve(op.n_outputs);
    for (uint32_t i = 0; i < op.n_outputs; ++i) r.output_dtypes.push_back(dtype_text(t[op.n_inputs + i]));
    const CastContext context{op.parent_entered_under_autocast,
                              op.inside_cast,
                              op.backward_of_autocast_cast,
                              op.backward_of_promotion,
                              op.on_autocast_list || op.autocast_cast_inside,
                              op.on_autocast_list && !op.autocast_promote_policy,
                              op.autocast_turned_off,
                              op.autocast_cast_to == kNoTensor
                                  ? std::string_view()
                                  : std::string_view(dtype_text(TensorDesc{.dtype = op.autocast_cast_to})),
                              op.in_sharding_scope};
    if (op.autograd_node) {
      r.category = OpCategory::kUnchanged;
    } else if (op.out_arguments == 0) {
      r.category = classify_op(r.name, r.input_dtypes, r.output_dtypes, context);
    } else {
      const std::vector<DtypeName> read(r.input_dtypes.begin(), r.input_dtypes.end() - op.out_arguments);
      r.category = classify_op(r.name, read, r.output_dtypes, context);
    }
    if (r.category == OpCategory::kAutocastCast || r.category == OpCategory::kExplicitCast ||
        r.category == OpCategory::kPromotionCast || r.category == OpCategory::kShardingCast)
      r.cast_bytes = op.out_bytes;
  }
  give_back_parts();
  return all;
}

std::atomic<uint64_t> OpObserver::next_serial_{1};

OpObserver::OpObserver()
    : node_creators_(std::make_unique<SequenceTable>()),
      serial_(next_serial_.fetch_add(1)),
      spares_(std::make_shared<SpareParts>()) {
  NameTable::instance();  // made here, not at a training step's first op: it reads autocast's lists
}

OpObserver::~OpObserver() { end_step(); }

OpObserver::ThreadState& OpObserver::thread_state() {
  // One state per (thread, observer); the registry keeps it alive for take().
  // The last one used is remembered: a thread sees one observer at a time.
  thread_local uint64_t last_serial = 0;
  thread_local ThreadState* last = nullptr;
  if (last_serial != serial_) {
    thread_local std::unordered_map<uint64_t, std::shared_ptr<ThreadState>> states;
    auto& slot = states[serial_];
    if (!slot) {
      slot = std::make_shared<ThreadState>();
      std::lock_guard lock(registry_mutex_);
      slot->thread_number = next_thread_number_++;
      threads_.push_back(slot);
    }
    last_serial = serial_;
    last = slot.get();
  }
  const uint64_t generation = generation_.load(std::memory_order_relaxed);
  if (last->generation != generation) last->restart(generation);
  return *last;
}

void OpObserver::begin_step(int64_t step) {
  step_.store(step, std::memory_order_relaxed);
  step_first_op_id_ = next_id_.load(std::memory_order_relaxed);
  if (!span_open_) {  // before any op of the span can be entered
    span_start_ = read_tick_pair();
    span_open_ = true;
  }
  if (handle_ != 0) return;
  // Before publishing `this`: a callback that sees it sees the new generation.
  generation_.fetch_add(1, std::memory_order_relaxed);
  OpObserver* expected = nullptr;
  if (!g_active.compare_exchange_strong(expected, this)) return;  // another observer is active
  node_creators_->clear();
  // TORCHSCRIPT_FUNCTION: the interpreter opens one per TorchScript function call,
  // so a thread knows when it runs TorchScript; other models never make one.
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit)
                                      .needsInputs(true)
                                      .needsOutputs(true)
                                      .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                                               at::RecordScope::USER_SCOPE,
                                               at::RecordScope::TORCHSCRIPT_FUNCTION}));
}

void OpObserver::end_step() {
  if (handle_ == 0) return;
  at::removeCallback(handle_);
  handle_ = 0;
  g_active.store(nullptr, std::memory_order_release);
}

OpBatch OpObserver::take() {
  OpBatch batch;
  batch.spares_ = spares_;
  // After every op taken here has finished; the next span starts here if ops go on.
  const TickPair now = read_tick_pair();
  batch.ticks_ = TickSpan(span_open_ ? span_start_ : now, now);
  span_start_ = now;
  span_open_ = recording();
  std::lock_guard registry(registry_mutex_);
  for (auto& ts : threads_) {
    OpBatch::Part part = spares_->take();
    // The thread records about as much next step as it did this one: spare it the
    // regrowth, grown here, outside its buffer's lock (held for the swap alone).
    part.ops.reserve(ts->taken.ops);
    part.tensors.reserve(ts->taken.tensors);
    part.dims.reserve(ts->taken.dims);
    {
      std::lock_guard lock(ts->finished_lock);
      std::swap(part, ts->finished);
    }
    ts->taken = {part.ops.size(), part.tensors.size(), part.dims.size()};
    if (part.ops.empty() && part.over_budget == 0) {
      spares_->give_back(std::move(part));
      continue;
    }
    part.thread_number = ts->thread_number;
    batch.parts_.push_back(std::move(part));
  }
  return batch;
}

}  // namespace ampscope::profiler
