#include "profiler/analysis/op_aggregator.h"

#include <string_view>

#include "profiler/analysis/op_classifier.h"
#include "profiler/op_signature.h"

namespace ampscope::profiler {
namespace {

void add_at(std::vector<int64_t>& samples, size_t slot, int64_t value) {
  if (samples.size() <= slot) samples.resize(slot + 1, 0);
  samples[slot] += value;
}

}  // namespace

std::optional<size_t> OpAggregator::sample_slot(int64_t step, bool may_add) {
  if (max_step_samples_ == 0) return std::nullopt;
  if (auto it = slot_by_step_.find(step); it != slot_by_step_.end()) return it->second;
  if (!may_add || sampled_steps_.size() >= max_step_samples_) return std::nullopt;
  slot_by_step_.emplace(step, sampled_steps_.size());
  sampled_steps_.push_back(step);
  return sampled_steps_.size() - 1;
}

size_t OpAggregator::row_for(const OpRecord& op, bool top_level, bool apart) {
  // A row per signature, top-level and nested apart, and the warm-up step's apart.
  std::vector<size_t>& bucket =
      rows_by_hash_[op_signature_hash(op) ^ (top_level ? kTopLevelSalt : 0) ^ (apart ? kApartSalt : 0)];
  std::vector<OpStats>& rows = table(apart);
  for (const size_t row : bucket)
    if (rows[row].top_level == top_level && same_op_signature(rows[row], op)) return row;
  OpStats row;
  row.name = op.name;
  row.module = op.module;
  row.phase = op.phase;
  row.category = op.category;
  row.top_level = top_level;
  row.input_dtypes = op.input_dtypes;
  row.input_shapes = op.input_shapes;
  row.output_dtypes = op.output_dtypes;
  rows.push_back(std::move(row));
  bucket.push_back(rows.size() - 1);
  return rows.size() - 1;
}

void OpAggregator::add_ops(const std::vector<OpRecord>& ops) {
  // Parents start before their children, so a pass in start order sees every parent first.
  for (const OpRecord& op : ops) {
    const bool apart = step_apart_ != 0 && op.step == step_apart_;
    const auto parent = ops_.find(op.parent_id);
    const bool parent_seen = op.parent_id != 0 && parent != ops_.end();
    // A parent in the other table (a call across the warm-up step's end) is none in this one:
    // the op is top-level here.
    const bool parent_known = parent_seen && parent->second.apart == apart;
    const bool container = op.autograd_node;
    const bool top_level = !container && (op.parent_id == 0 || (parent_seen && !parent_known) ||
                                          (parent_known && parent->second.container));
    const size_t row = row_for(op, top_level, apart);
    OpStats& stats = table(apart)[row];
    ++stats.calls;
    stats.cpu_time_ns += op.end_ns - op.start_ns;
    // The warm-up step takes no sample slot: the steady rows' samples are the table's steps.
    if (const auto slot = apart ? std::nullopt : sample_slot(op.step, true))
      add_at(stats.step_cpu_time_ns, *slot, op.end_ns - op.start_ns);

    size_t cast_for = npos;
    const size_t top_row = top_level ? row : parent_known ? parent->second.top_row : npos;
    if ((op.category == OpCategory::kAutocastCast) && parent_known && !parent->second.container) {
      cast_for = parent->second.row;
      for (const size_t owner_row : {cast_for, top_row == cast_for ? npos : top_row}) {
        if (owner_row == npos) continue;
        OpStats& owner = table(apart)[owner_row];
        ++owner.cast_calls;
        owner.cast_bytes += op.cast_bytes;
        owner.cast_cpu_time_ns += op.end_ns - op.start_ns;
      }
    } else if (parent_known) {
      cast_for = parent->second.cast_for_row;  // inside a cast: its kernels are cast tax too
    }
    ops_[op.id] = OpLink{row, op.parent_id, op.step, cast_for, top_row, container, apart};
    if (op_ids_by_step_.empty() || op.step > op_ids_by_step_.back().first) op_ids_by_step_.emplace_back(op.step, 0);
    op_ids_by_step_.back().second.push_back(op.id);
    newest_step_ = std::max(newest_step_, op.step);
  }
  // Kernels that came before their ops: every op of the batch is known now, parents included.
  if (parked_count_ > 0) {
    for (const OpRecord& op : ops) {
      auto waiting = parked_.find(op.id);
      if (waiting == parked_.end()) continue;
      const OpLink& link = ops_.at(op.id);
      parked_count_ -= waiting->second.size();
      for (KernelRecord& k : waiting->second) attribute(std::move(k), link);
      parked_.erase(waiting);
    }
    if (parked_.empty()) parked_order_.clear();
  }
  forget_old_ops(newest_step_);
}

void OpAggregator::add_kernels(std::vector<KernelRecord> kernels) {
  for (KernelRecord& k : kernels) {
    if (k.op_id == 0) {
      settle_unattributed(std::move(k));
      continue;
    }
    if (auto it = ops_.find(k.op_id); it != ops_.end()) {
      attribute(std::move(k), it->second);
      continue;
    }
    // The op has not arrived yet (a buffer delivered mid-step): wait for it.
    auto [slot, first] = parked_.try_emplace(k.op_id);
    if (first) parked_order_.push_back(k.op_id);
    slot->second.push_back(std::move(k));
    ++parked_count_;
    ++parked_total_;
    while (parked_count_ > max_parked_ && !parked_order_.empty()) {
      const uint64_t oldest = parked_order_.front();
      parked_order_.pop_front();
      auto victim = parked_.find(oldest);
      if (victim == parked_.end()) continue;  // already joined
      for (KernelRecord& v : victim->second) {
        ++given_up_;
        settle_unattributed(std::move(v));
      }
      parked_count_ -= victim->second.size();
      parked_.erase(victim);
    }
  }
}

void OpAggregator::release_parked() {
  for (uint64_t id : parked_order_) {
    auto it = parked_.find(id);
    if (it == parked_.end()) continue;
    for (KernelRecord& k : it->second) {
      ++given_up_;
      settle_unattributed(std::move(k));
    }
    parked_.erase(it);
  }
  parked_order_.clear();
  parked_count_ = 0;
}

size_t OpAggregator::discard_parked_from(uint64_t first_op_id) {
  size_t discarded = 0;
  std::erase_if(parked_, [&](const auto& entry) {
    if (entry.first < first_op_id) return false;
    discarded += entry.second.size();
    return true;
  });
  parked_count_ -= discarded;  // parked_order_ may keep their ids: it skips ids not parked
  return discarded;
}

std::vector<OpAggregator::SettledKernel> OpAggregator::take_settled() {
  std::vector<SettledKernel> out;
  out.swap(settled_);
  return out;
}

void OpAggregator::settle_unattributed(KernelRecord&& k) {
  const int64_t duration = k.end_ns - k.start_ns;
  ++unattributed_kernels_;
  unattributed_gpu_ns_ += duration;
  k.op_id = 0;  // stored and exported as "no op", whatever id it waited for
  k.step = newest_step_;
  const bool apart = step_apart_ != 0 && k.step == step_apart_;
  settled_.push_back({std::move(k), std::string(), {}, apart});
}

void OpAggregator::attribute(KernelRecord&& k, const OpLink& link) {
  const int64_t duration = k.end_ns - k.start_ns;
  if (link.cast_for_row != npos) {
    std::vector<OpStats>& rows = table(link.apart);
    rows[link.cast_for_row].cast_gpu_time_ns += duration;
    if (link.top_row != npos && link.top_row != link.cast_for_row) rows[link.top_row].cast_gpu_time_ns += duration;
  }
  const auto slot = link.apart ? std::nullopt : sample_slot(link.step, false);
  // Inclusive GPU time: the launching op and each recorded ancestor.
  std::vector<std::string> enclosing;
  for (uint64_t id = k.op_id; id != 0;) {
    auto ancestor = ops_.find(id);
    if (ancestor == ops_.end() || ancestor->second.apart != link.apart) break;
    OpStats& row = table(link.apart)[ancestor->second.row];
    row.gpu_time_ns += duration;
    if (slot) add_at(row.step_gpu_time_ns, *slot, duration);
    if (k.kind == ActivityKind::kKernel) {
      ++row.kernels;
      if (k.tensor_core_by_name) {
        ++row.tensor_core_kernels;
        row.tensor_core_gpu_time_ns += duration;
      }
    }
    if (id != k.op_id) enclosing.push_back(row.name);
    id = ancestor->second.parent_id;
  }
  k.step = link.step;
  settled_.push_back({std::move(k), table(link.apart)[link.row].name, std::move(enclosing), link.apart});
}

std::optional<int64_t> OpAggregator::step_of(uint64_t op_id) const {
  const auto it = ops_.find(op_id);
  return it == ops_.end() ? std::nullopt : std::optional<int64_t>(it->second.step);
}

std::optional<std::string> OpAggregator::name_of(uint64_t op_id) const {
  const auto it = ops_.find(op_id);
  return it == ops_.end() ? std::nullopt : std::optional<std::string>(table(it->second.apart)[it->second.row].name);
}

void OpAggregator::forget_old_ops(int64_t current_step) {
  if (ops_.size() < 4096) return;
  while (!op_ids_by_step_.empty() && op_ids_by_step_.front().first + op_memory_steps_ < current_step) {
    for (const uint64_t id : op_ids_by_step_.front().second) ops_.erase(id);
    op_ids_by_step_.pop_front();
  }
}

}  // namespace ampscope::profiler
