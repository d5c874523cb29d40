#include "profiler/cupti/record_processor.h"

#include <cxxabi.h>

#include <cstdlib>
#include <utility>

namespace ampscope::profiler::cupti {
namespace {

// Distinct kernel names per run are a few thousand at most; the cache is
// cleared rather than grown past this.
constexpr size_t kMaxNames = 1 << 16;

}  // namespace

std::string memcpy_name(uint32_t kind) {
  // Numbers are CUpti_ActivityMemcpyKind (cupti_activity.h); stable across CUPTI versions.
  switch (kind) {
    case 1:
      return "Memcpy HtoD";
    case 2:
      return "Memcpy DtoH";
    case 3:
      return "Memcpy HtoA";
    case 4:
      return "Memcpy AtoH";
    case 5:
      return "Memcpy AtoA";
    case 6:
      return "Memcpy AtoD";
    case 7:
      return "Memcpy DtoA";
    case 8:
      return "Memcpy DtoD";
    case 9:
      return "Memcpy HtoH";
    case 10:
      return "Memcpy PtoP";
    default:
      return "Memcpy";
  }
}

std::string demangle(const std::string& name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return name;
  }
  std::string result(out);
  std::free(out);
  return result;
}

RecordProcessor::RecordProcessor(ActivitySink& sink, std::shared_ptr<const TensorCoreRules> rules)
    : RecordProcessor(sink, std::move(rules), Options{}) {}

RecordProcessor::RecordProcessor(ActivitySink& sink, std::shared_ptr<const TensorCoreRules> rules,
                                 Options options)
    : sink_(sink), rules_(std::move(rules)), options_(options) {
  if (options_.max_pending == 0) options_.max_pending = 1;
  if (options_.max_mappings == 0) options_.max_mappings = 1;
  if (options_.batch_size == 0) options_.batch_size = 1;
}

const TensorCoreClass& RecordProcessor::classify_cached(const std::string& raw_name,
                                                        std::string* demangled) {
  auto it = names_.find(raw_name);
  if (it == names_.end()) {
    if (names_.size() >= kMaxNames) names_.clear();
    NameInfo info;
    info.demangled = demangle(raw_name);
    if (rules_) info.tc = rules_->classify(info.demangled);
    it = names_.emplace(raw_name, std::move(info)).first;
  }
  *demangled = it->second.demangled;
  return it->second.tc;
}

void RecordProcessor::add(DeviceActivity activity) {
  if (auto it = op_of_correlation_.find(static_cast<uint32_t>(activity.correlation_id));
      it != op_of_correlation_.end()) {
    resolve(std::move(activity), it->second);
    return;
  }
  const uint64_t seq = next_seq_++;
  pending_by_correlation_.emplace(static_cast<uint32_t>(activity.correlation_id), seq);
  pending_.emplace(seq, std::move(activity));
  // Bounded wait: the oldest waiter is the least likely to still get a mapping.
  while (pending_.size() > options_.max_pending) {
    auto oldest = pending_.begin();
    auto [lo, hi] =
        pending_by_correlation_.equal_range(static_cast<uint32_t>(oldest->second.correlation_id));
    for (auto i = lo; i != hi; ++i) {
      if (i->second == oldest->first) {
        pending_by_correlation_.erase(i);
        break;
      }
    }
    ++stats_.evicted_pending;
    DeviceActivity a = std::move(oldest->second);
    pending_.erase(oldest);
    resolve(std::move(a), 0);
  }
}

void RecordProcessor::add(const ApiActivity& api) {
  // API records only count for now: the join needs just the external
  // correlations. (They would give the launching thread and the launch cost
  // per op; KernelRecord has no field for either yet.)
  ++stats_.api_records;
}

void RecordProcessor::add(const ExternalCorrelation& c) {
  ++stats_.correlations;
  auto [it, inserted] = op_of_correlation_.insert_or_assign(c.correlation_id, c.external_id);
  if (inserted) {
    mapping_order_.push_back(c.correlation_id);
    // Correlation ids grow monotonically, so FIFO ageing drops the oldest launches.
    while (mapping_order_.size() > options_.max_mappings) {
      op_of_correlation_.erase(mapping_order_.front());
      mapping_order_.pop_front();
    }
  }
  // Activities that arrived before their mapping.
  auto [lo, hi] = pending_by_correlation_.equal_range(c.correlation_id);
  if (lo == hi) return;
  std::vector<uint64_t> seqs;
  for (auto i = lo; i != hi; ++i) seqs.push_back(i->second);
  pending_by_correlation_.erase(lo, hi);
  for (uint64_t seq : seqs) {
    auto p = pending_.find(seq);
    if (p == pending_.end()) continue;
    DeviceActivity a = std::move(p->second);
    pending_.erase(p);
    resolve(std::move(a), c.external_id);
  }
}

void RecordProcessor::resolve(DeviceActivity&& a, uint64_t op_id) {
  a.op_id = op_id;
  if (op_id == 0) ++stats_.unmapped;
  if (a.kind == ActivityKind::kKernel) {
    ++stats_.kernels;
    std::string demangled;
    const TensorCoreClass& tc = classify_cached(a.name, &demangled);
    a.tensor_core_by_name = tc.uses_tensor_cores;
    a.name = std::move(demangled);
  } else {
    ++stats_.memory_ops;
  }
  ready_.push_back(std::move(a));
  emit_ready_if_full();
}

void RecordProcessor::emit_ready_if_full() {
  if (ready_.size() >= options_.batch_size) drain();
}

void RecordProcessor::drain() {
  if (ready_.empty()) return;
  std::vector<KernelRecord> batch;
  batch.swap(ready_);
  sink_.on_kernels(std::move(batch));
}

void RecordProcessor::flush() {
  // Everything still waiting has lost its mapping: the external-correlation
  // record is written when the launch call returns, before the work can finish.
  auto waiting = std::move(pending_);
  pending_.clear();
  pending_by_correlation_.clear();
  for (auto& [seq, a] : waiting) resolve(std::move(a), 0);
  drain();
}

std::unordered_map<uint64_t, OpGpuTotals> gpu_totals_by_op(
    const std::vector<KernelRecord>& records) {
  std::unordered_map<uint64_t, OpGpuTotals> totals;
  for (const KernelRecord& r : records) {
    OpGpuTotals& t = totals[r.op_id];
    const int64_t ns = r.end_ns > r.start_ns ? r.end_ns - r.start_ns : 0;
    t.gpu_time_ns += ns;
    if (r.kind != ActivityKind::kKernel) continue;
    ++t.kernels;
    if (r.tensor_core_by_name) {
      ++t.tensor_core_kernels;
      t.tensor_core_gpu_time_ns += ns;
    }
  }
  return totals;
}

}  // namespace ampscope::profiler::cupti
