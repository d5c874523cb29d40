#pragma once
// The kernel table (KernelSummary rows): one per kernel name, with calls, time,
// Tensor Core use and the ops that launched it. The one aggregation of kernels:
// the profiler's live snapshots and the session's kernel_stats table are both
// made from it, so what the GUI shows live and what a saved session shows agree.
// Pure data, no LibTorch; fed with the kernels the OpAggregator has settled.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {

class KernelAggregator {
 public:
  static constexpr size_t kMaxLaunchingOps = 8;

  // `launching_op`: the name of the op that launched it, "" when unattributed;
  // `enclosing_ops`: the recorded ops it ran inside (the launching op's ancestors).
  void add(const KernelRecord& kernel, const std::string& launching_op,
           const std::vector<std::string>& enclosing_ops = {});

  // Rows by total time, descending; mean_ns filled in, launching_ops the most
  // frequent first (at most kMaxLaunchingOps). The launch configuration is the
  // first call's.
  std::vector<KernelSummary> summaries() const;
  // Every (kernel name, op name) pair with its calls, for the store's kernel_ops table.
  using OpCalls = std::unordered_map<std::string, std::map<std::string, int64_t>>;
  const OpCalls& launchers() const { return launchers_; }
  // The same for the ops kernels ran inside (KernelSummary::enclosing_ops).
  const OpCalls& enclosing() const { return enclosing_; }
  int64_t total_gpu_ns() const { return total_ns_; }
  int64_t calls() const { return calls_; }
  int64_t longest_ns() const { return longest_ns_; }
  bool empty() const { return rows_.empty(); }

 private:
  std::unordered_map<std::string, KernelSummary> rows_;
  static std::vector<std::string> most_calls_first(const OpCalls& calls, const std::string& kernel);

  OpCalls launchers_;
  OpCalls enclosing_;
  int64_t total_ns_ = 0;
  int64_t calls_ = 0;
  int64_t longest_ns_ = 0;
};

}  // namespace ampscope::profiler
