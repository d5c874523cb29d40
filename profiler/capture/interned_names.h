#pragma once
// Op names and module paths interned for the op observer's hot path: a
// process-wide table that only grows, and a per-thread cache in front of it so
// a lookup takes no lock. Internal to profiler/capture/op_observer.cpp.
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include "profiler/analysis/op_classifier.h"

namespace ampscope::profiler::observer_detail {

// kAutocastCpu/kAutocastCuda: the op is on autocast's lists for that device;
// kAutocastPromoteCpu/kAutocastPromoteCuda (those bits shifted by kPromoteShift): under its
// promote policy there (the widest input's dtype), where its other policies run it in fp16/bf16
// or in fp32 whatever the inputs.
enum NameFlag : uint8_t {
  kCastOp = 1,
  kEvaluateFunction = 2,
  kFunctionForward = 4,
  kAutocastCpu = 8,
  kAutocastCuda = 16,
  kAutocastPromoteCpu = 32,
  kAutocastPromoteCuda = 64,
};
inline constexpr int kPromoteShift = 2;
static_assert(kAutocastCpu << kPromoteShift == kAutocastPromoteCpu &&
              kAutocastCuda << kPromoteShift == kAutocastPromoteCuda);
// The devices among `devices` (kAutocastCpu/kAutocastCuda bits) where autocast decides the
// op's dtype: on its lists there, not under the promote policy (ATen promotes those inputs as
// autocast would, so promoting is no decision of autocast's).
constexpr uint8_t autocast_decides_on(uint8_t flags, uint8_t devices) {
  return static_cast<uint8_t>(flags & ~(flags >> kPromoteShift) & devices);
}
static_assert(autocast_decides_on(kAutocastCuda | kAutocastCpu | kAutocastPromoteCpu, kAutocastCpu | kAutocastCuda) ==
              kAutocastCuda);
struct NameInfo {
  uint32_t id = 0;
  uint8_t flags = 0;  // NameFlag bits, so the hot path never compares names
};

// Op names and module paths for the whole process. Ids stay valid for every
// observer and batch, and the strings never move (a deque), so views of them
// stay valid too. Id 0 is "".
class NameTable {
 public:
  static NameTable& instance() {
    static NameTable* table = new NameTable;  // never destroyed: callbacks may run during exit
    return *table;
  }
  std::pair<NameInfo, std::string_view> intern(std::string_view text) {
    std::lock_guard lock(mutex_);
    if (auto it = ids_.find(text); it != ids_.end()) return {it->second, it->first};
    const std::string& stored = names_.emplace_back(text);
    const NameInfo info{static_cast<uint32_t>(names_.size() - 1), flags_of(stored)};
    ids_.emplace(stored, info);
    return {info, stored};
  }
  std::vector<std::string_view> snapshot() {
    std::lock_guard lock(mutex_);
    return {names_.begin(), names_.end()};
  }

 private:
  NameTable() { intern(""); }
  static uint8_t flags_of(std::string_view name) {
    // Autograd's engine wraps each node ("AddmmBackward0", scope BACKWARD_FUNCTION) in a
    // FUNCTION-scope "autograd::engine::evaluate_function: AddmmBackward0": both are containers.
    return (is_cast_op(name) ? kCastOp : 0) |
           (name.starts_with("autograd::engine::evaluate_function") ? kEvaluateFunction : 0) |
           (is_function_forward(name) ? kFunctionForward : 0) | autocast_lists(name);
  }
  // Autocast's lists, from PyTorch's dispatcher: an op on them has an autocast kernel for
  // the device (lower precision, fp32 or promote), the others fall through. By name, any
  // overload (records name ops without one). Read once, when the table is made: an op
  // registered later (a custom op with an autocast kernel of its own) is not seen.
  // Which policy a kernel has, the dispatcher does not say. CUDA's promote ops are
  // ATen's own list (AT_FORALL_PROMOTE in the ATen/autocast_mode.h we build against);
  // the CPU's are registered in autocast_mode.cpp, not in a header: cat, stack and
  // index_copy (checked against PyTorch: OpObserver.MixedInputsOfAnFp32PolicyOpAreKeptFp32).
  static uint8_t autocast_lists(std::string_view name) {
    static const std::unordered_map<std::string, uint8_t> listed = [] {
      std::unordered_map<std::string, uint8_t> by_name;
      c10::Dispatcher& dispatcher = c10::Dispatcher::singleton();
      for (const c10::OperatorName& op : dispatcher.getAllOpNames()) {
        const auto handle = dispatcher.findOp(op);
        if (!handle) continue;
        const uint8_t bits = (handle->hasKernelForDispatchKey(c10::DispatchKey::AutocastCPU) ? kAutocastCpu : 0) |
                             (handle->hasKernelForDispatchKey(c10::DispatchKey::AutocastCUDA) ? kAutocastCuda : 0);
        if (bits != 0) by_name[op.name] |= bits;
      }
#define AMPSCOPE_CUDA_PROMOTE(op, ...) promote(by_name, "aten::" #op, kAutocastCuda);
      AT_FORALL_PROMOTE(AMPSCOPE_CUDA_PROMOTE)
#undef AMPSCOPE_CUDA_PROMOTE
      for (const char* op : {"aten::cat", "aten::stack", "aten::index_copy"}) promote(by_name, op, kAutocastCpu);
      return by_name;
    }();
    if (name.find("::") == std::string_view::npos) return 0;
    const auto it = listed.find(std::string(name));
    return it == listed.end() ? 0 : it->second;
  }
  // Marks `op` as under the promote policy on `device`, where that device's list holds it.
  static void promote(std::unordered_map<std::string, uint8_t>& by_name, const char* op, uint8_t device) {
    if (auto it = by_name.find(op); it != by_name.end() && (it->second & device) != 0)
      it->second |= static_cast<uint8_t>(device << kPromoteShift);
  }
  // A custom autograd.Function's forward, recorded (FUNCTION scope) under its class's bare
  // name, a Python identifier in CamelCase ("Float32MM", "CheckpointFunction", "_AllGather"),
  // where ops carry a namespace ("aten::mm"), autograd's own records are lower case
  // ("detach") and others have spaces ("TorchDynamo Cache Lookup"); the observer also asks
  // for the node's sequence number the record carries. Not torch.compile's
  // CompiledFunction: its row times the compiled region (eager_vs_compiled).
  static bool is_function_forward(std::string_view name) {
    if (name.empty() || !((name[0] >= 'A' && name[0] <= 'Z') || name[0] == '_')) return false;
    for (const char c : name)
      if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
    return name != "CompiledFunction";
  }
  std::mutex mutex_;
  std::deque<std::string> names_;
  std::unordered_map<std::string_view, NameInfo> ids_;
};

// One thread's view of the table, so lookups take no lock. Ops named by their
// schema keep one name address for the process's life: the address finds them
// (checked against the text, since autograd's node names are strings that come
// and go). Other names go by their text.
class NameCache {
 public:
  NameInfo lookup(const char* name) {
    const auto bits = reinterpret_cast<uintptr_t>(name);
    Slot& slot = slots_[((bits >> 4) ^ (bits >> 13)) & (kSlots - 1)];
    if (slot.address == name && std::strcmp(name, slot.text) == 0) return slot.info;
    const auto [info, text] = lookup(std::string_view(name));
    slot = {name, text.data(), info};
    return info;
  }
  std::pair<NameInfo, std::string_view> lookup(std::string_view text) {
    if (auto it = by_text_.find(text); it != by_text_.end()) return {it->second, it->first};
    const auto found = NameTable::instance().intern(text);
    by_text_.emplace(found.second, found.first);
    return found;
  }

 private:
  static constexpr size_t kSlots = 512;
  struct Slot {
    const char* address = nullptr;
    const char* text = nullptr;  // the table's copy, NUL-terminated
    NameInfo info;
  };
  std::array<Slot, kSlots> slots_{};
  std::unordered_map<std::string_view, NameInfo> by_text_;  // views into the table
};

}  // namespace ampscope::profiler::observer_detail
