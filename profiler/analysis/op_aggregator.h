#pragma once
// Builds the op table (OpStats rows) from op records and the kernels they
// launched. Pure data, no LibTorch: runs on the profiler's worker thread live,
// and in tests on synthetic records.
//
// Kernels may arrive long after their ops (CUPTI delivers buffers late), so the
// aggregator remembers where each op landed for the last `op_memory_steps` steps.
// They may also arrive before them: CUPTI hands over a full buffer mid-step,
// while the step's ops come at its end. Such kernels are parked (bounded) and
// joined when their op arrives; none is silently dropped. Every kernel comes
// out exactly once through take_settled(): attributed, or counted unattributed.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {


// How many steps after its own an op's kernels may still arrive and be joined to it.
inline constexpr int64_t kOpMemorySteps = 64;

class OpAggregator {
 public:
  // max_step_samples > 0: the first that many steps seen (not the step kept apart) also get
  // per-step times in each row (OpStats::step_*_time_ns); bounded so a long live run cannot
  // grow them.
  explicit OpAggregator(int64_t op_memory_steps = kOpMemorySteps, size_t max_step_samples = 0,
                        size_t max_parked = kDefaultMaxParked)
      : op_memory_steps_(op_memory_steps), max_step_samples_(max_step_samples), max_parked_(max_parked) {}

  // The ops of `step` (and their kernels and casts) go to rows of their own,
  // warmup_op_stats(), instead of op_stats(): the run's first step, whose one-off costs
  // (lazy initialisation, library loading, first allocations) are no steady step's.
  // 0: none apart. Set before the first op.
  void keep_step_apart(int64_t step) { step_apart_ = step; }
  // Kernels arrive for ops of the last `steps` steps only (1: none arrive at all, as on the
  // CPU: an op is remembered only while its step's children may still come).
  void set_op_memory_steps(int64_t steps) { op_memory_steps_ = steps; }
  // Records of whole steps (every op whose parent is in the batch or earlier).
  void add_ops(const std::vector<OpRecord>& ops);
  // Kernels of ops seen are attributed; kernels of ops not seen yet are parked
  // until their op arrives (at most max_parked, the oldest then given up on);
  // kernels launched outside any op (op_id 0) count as unattributed.
  void add_kernels(std::vector<KernelRecord> kernels);
  // Gives up on every parked kernel (the end of a recording): unattributed.
  void release_parked();
  // Forgets the parked kernels of ops with ids from `first_op_id` up (ops that will
  // never arrive: a step the run's stop interrupted). Returns how many.
  size_t discard_parked_from(uint64_t first_op_id);
  // Kernels settled since the last call, in arrival order, with `step` filled in
  // (their op's step, or the newest step seen when unattributed) and the name of
  // the op that launched them ("" when unattributed).
  struct SettledKernel {
    KernelRecord record;
    std::string op_name;
    std::vector<std::string> enclosing_ops;  // the launching op's recorded ancestors, innermost first
    // Of the step kept apart: its op's step, or with no op, the step `step` names.
    bool apart = false;
  };
  std::vector<SettledKernel> take_settled();

  // The op table without the step kept apart; that step's own rows.
  const std::vector<OpStats>& op_stats() const { return rows_; }
  const std::vector<OpStats>& warmup_op_stats() const { return warmup_rows_; }
  // Of an op seen in the last op_memory_steps steps.
  std::optional<int64_t> step_of(uint64_t op_id) const;
  std::optional<std::string> name_of(uint64_t op_id) const;
  int64_t unattributed_kernels() const { return unattributed_kernels_; }
  int64_t unattributed_gpu_ns() const { return unattributed_gpu_ns_; }
  // Kernels waiting for their op now, and how many were ever parked / given up on.
  size_t parked_kernels() const { return parked_count_; }
  int64_t kernels_parked_total() const { return parked_total_; }
  int64_t kernels_given_up() const { return given_up_; }
  static constexpr size_t kDefaultMaxParked = 1 << 20;
  // The steps that have per-step samples, in the order of the rows' sample vectors.
  const std::vector<int64_t>& sampled_steps() const { return sampled_steps_; }

 private:
  struct OpLink {
    size_t row;
    uint64_t parent_id;
    int64_t step;
    // The row of the op a cast was made for (its parent), or npos.
    size_t cast_for_row;
    // The row of the top-level op it is or runs in; npos in a container's own record. When it
    // is not cast_for_row, the cast was made for a nested op (CPU's aten::lstm holds its layers,
    // whose inputs autocast casts): a top-level row's cast tax is that of every autocast cast
    // inside it, as its time is inclusive.
    size_t top_row;
    bool container;  // an autograd node record: its children are the top-level ops
    bool apart;      // of the step kept apart: its rows are warm-up rows
  };
  static constexpr size_t npos = static_cast<size_t>(-1);

  size_t row_for(const OpRecord& op, bool top_level, bool apart);
  std::vector<OpStats>& table(bool apart) { return apart ? warmup_rows_ : rows_; }
  const std::vector<OpStats>& table(bool apart) const { return apart ? warmup_rows_ : rows_; }
  // The sample slot of `step`; a new step gets one while there is room.
  std::optional<size_t> sample_slot(int64_t step, bool may_add);
  void forget_old_ops(int64_t current_step);
  void attribute(KernelRecord&& k, const OpLink& link);
  void settle_unattributed(KernelRecord&& k);

  int64_t op_memory_steps_;
  size_t max_step_samples_;
  std::vector<int64_t> sampled_steps_;
  std::unordered_map<int64_t, size_t> slot_by_step_;
  std::vector<OpStats> rows_;
  std::vector<OpStats> warmup_rows_;  // of the step kept apart; OpLink::row indexes table(apart)
  int64_t step_apart_ = 0;
  // Rows by op_signature_hash (top-level and apart rows' salted): no key is built per op.
  static constexpr uint64_t kTopLevelSalt = 0x5bd1e9955bd1e995ULL;
  static constexpr uint64_t kApartSalt = 0x9e3779b97f4a7c15ULL;
  std::unordered_map<uint64_t, std::vector<size_t>> rows_by_hash_;
  std::unordered_map<uint64_t, OpLink> ops_;
  // The ids in ops_ by the step they arrived with, oldest first, so forgetting a
  // step's ops costs its own ops, not a scan of every op kept (64 steps of a
  // launch-bound model is half a million). An op of an older step than the last
  // one listed joins the last: kept a little longer, never dropped early.
  std::deque<std::pair<int64_t, std::vector<uint64_t>>> op_ids_by_step_;
  int64_t newest_step_ = 0;
  int64_t unattributed_kernels_ = 0;
  int64_t unattributed_gpu_ns_ = 0;
  // Kernels waiting for their op, by op id; arrival order kept for giving up oldest first.
  size_t max_parked_;
  std::unordered_map<uint64_t, std::vector<KernelRecord>> parked_;
  std::deque<uint64_t> parked_order_;  // op ids in first-parked order (may hold settled ids)
  size_t parked_count_ = 0;
  int64_t parked_total_ = 0;
  int64_t given_up_ = 0;
  std::vector<SettledKernel> settled_;
};

}  // namespace ampscope::profiler
