#pragma once
// Turns decoded GPU activity into KernelRecords tied to ops. Pure logic, no
// CUPTI types: the CUPTI source decodes its structs into these plain values,
// and tests feed them by hand.
//
// Correlation: a kernel/memcpy/memset carries CUPTI's correlation id, the id
// of the API call (cudaLaunchKernel, cuLaunchKernelEx, cudaMemcpyAsync, ...)
// that launched it. When that call ran between push_external_id(op) and
// pop_external_id(), CUPTI also writes an external-correlation record
// {external id = op id, correlation id}. The two arrive in separate buffers in
// no particular order, so either side may wait for the other:
//   - mappings (correlation id -> op id) are kept in a FIFO bounded by
//     Options::max_mappings; one mapping can serve many activities (a CUDA
//     graph launch is one API call and many kernels), so they are not erased
//     on use, only aged out;
//   - activities whose mapping has not arrived wait in `pending`, at most
//     Options::max_pending; past that the oldest is emitted with op_id 0 and
//     counted (evicted_pending). flush() emits all that still wait, op_id 0.
//
// Not thread-safe: one thread at a time (the CUPTI source serializes calls
// under its processor lock).
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "profiler/cupti/activity_source.h"
#include "profiler/cupti/tensor_core_rules.h"
#include "profiler/records.h"

namespace ampscope::profiler::cupti {

// A GPU activity as decoded: a KernelRecord with op_id unset and `name`
// possibly mangled ("_Z..."). For memcpy/memset, kind/bytes/name are set
// ("Memcpy HtoD", "Memset").
using DeviceActivity = KernelRecord;

struct ApiActivity {
  uint32_t correlation_id = 0;
  uint32_t cbid = 0;  // CUPTI callback id (cupti_runtime_cbid.h / cupti_driver_cbid.h)
  uint32_t thread_id = 0;
  bool driver = false;  // driver API (cuLaunchKernel) rather than runtime API
  int64_t start_ns = 0, end_ns = 0;
};

struct ExternalCorrelation {
  uint64_t external_id = 0;  // the op id pushed with push_external_id
  uint32_t correlation_id = 0;
};

// "Memcpy HtoD" etc. for CUPTI's memcpy kind numbers (CUpti_ActivityMemcpyKind).
std::string memcpy_name(uint32_t cupti_copy_kind);

// abi::__cxa_demangle for "_Z..." names; anything else, or a name that fails
// to demangle, comes back unchanged.
std::string demangle(const std::string& name);

class RecordProcessor {
 public:
  struct Options {
    size_t max_pending = 1 << 16;   // activities waiting for their mapping
    size_t max_mappings = 1 << 20;  // correlation -> op entries kept (~32 B each)
    size_t batch_size = 4096;       // records per on_kernels() call (at most)
  };

  // `rules` may be null (no Tensor Core classification).
  RecordProcessor(ActivitySink& sink, std::shared_ptr<const TensorCoreRules> rules);
  RecordProcessor(ActivitySink& sink, std::shared_ptr<const TensorCoreRules> rules,
                  Options options);

  void add(DeviceActivity activity);
  void add(const ApiActivity& api);
  void add(const ExternalCorrelation& correlation);
  void add_overhead_ns(int64_t ns) { stats_.overhead_ns += ns; }
  void add_dropped_by_cupti(int64_t n) { stats_.dropped_by_cupti += n; }

  // Emits the records resolved so far (the source calls it after each buffer).
  void drain();
  // Emits everything, pending activities with op_id 0.
  void flush();

  const ActivityStats& stats() const { return stats_; }
  size_t pending() const { return pending_.size(); }

 private:
  void resolve(DeviceActivity&& activity, uint64_t op_id);
  void emit_ready_if_full();
  const TensorCoreClass& classify_cached(const std::string& raw_name, std::string* demangled);

  ActivitySink& sink_;
  std::shared_ptr<const TensorCoreRules> rules_;
  Options options_;
  ActivityStats stats_;

  std::unordered_map<uint32_t, uint64_t> op_of_correlation_;
  std::deque<uint32_t> mapping_order_;  // FIFO of correlation ids, for aging out

  // Waiting activities in arrival order (seq), and their seqs by correlation id.
  std::map<uint64_t, DeviceActivity> pending_;
  std::unordered_multimap<uint32_t, uint64_t> pending_by_correlation_;
  uint64_t next_seq_ = 1;

  // Raw (mangled) name -> demangled name + class: kernel names repeat every step.
  struct NameInfo {
    std::string demangled;
    TensorCoreClass tc;
  };
  std::unordered_map<std::string, NameInfo> names_;

  std::vector<KernelRecord> ready_;
};

// Per-op GPU totals from finished records (kernels and memory ops alike).
struct OpGpuTotals {
  int64_t gpu_time_ns = 0;
  int64_t kernels = 0;
  int64_t tensor_core_kernels = 0;
  int64_t tensor_core_gpu_time_ns = 0;
};
std::unordered_map<uint64_t, OpGpuTotals> gpu_totals_by_op(
    const std::vector<KernelRecord>& records);

}  // namespace ampscope::profiler::cupti
