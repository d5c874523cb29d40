#include "profiler/recording_health.h"

#include <stdexcept>
#include <vector>

#include "profiler/process_identity.h"
#include "profiler/session_meta_keys.h"

namespace ampscope::profiler {
namespace {

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

uint64_t count_of(const std::map<std::string, std::string>& meta, const char* key) {
  return static_cast<uint64_t>(meta_key::count(meta, key).value_or(0));
}

}  // namespace

std::string describe(const RecordingHealth& h) {
  std::vector<std::string> parts;
  if (!h.store_error.empty()) {
    parts.push_back("the session writer failed (" + h.store_error + ")" +
                    (h.store_dropped_batches > 0
                         ? " and did not store " + plural(h.store_dropped_batches, "batch", "batches") + " of records"
                         : std::string()));
  } else if (h.store_counts_missing) {
    parts.push_back("the session writer could not store what it lost (a write failed as the run ended: disk full?); "
                    "records may be missing that no count here names");
  } else if (h.store_dropped_batches > 0) {
    parts.push_back("the session writer could not keep up and did not store " +
                    plural(h.store_dropped_batches, "batch", "batches") + " of records");
  }
  if (h.profiler_dropped_batches > 0)
    parts.push_back("the profiler could not keep up and dropped " +
                    plural(h.profiler_dropped_batches, "batch", "batches") + " of records");
  if (!h.op_sampling_fallbacks.empty()) parts.push_back(OpSamplingRule::describe(h.op_sampling_fallbacks));
  if (h.ops_over_step_budget > 0)
    parts.push_back(plural(h.ops_over_step_budget, "op call", "op calls") + " over the budget of " +
                    std::to_string(h.step_op_budget) + " per thread and step (from step " +
                    std::to_string(h.first_step_over_budget) + ") were counted, not recorded");
  if (h.interrupted_step_ops + h.interrupted_step_gpu_activities > 0)
    parts.push_back("the stop interrupted step " + std::to_string(h.interrupted_step) + ": its " +
                    plural(h.interrupted_step_ops, "op call", "op calls") + " and " +
                    plural(h.interrupted_step_gpu_activities, "GPU activity", "GPU activities") +
                    " were not kept");
  if (h.range_samples_stopped_step > 0)
    parts.push_back("range samples stopped at step " + std::to_string(h.range_samples_stopped_step) + ": " +
                    h.range_samples_stopped_why + "; that step's sample was dropped and the training went on " +
                    "without them");
  if (h.cupti_dropped_records > 0)
    parts.push_back("CUPTI dropped " + plural(h.cupti_dropped_records, "GPU record", "GPU records"));
  if (h.dropped_events > 0)
    parts.push_back("the display could not keep up and missed " +
                    plural(h.dropped_events, "run event", "run events"));
  if (!h.closed && !h.still_recording)
    parts.push_back("the session was not closed (its run is still going, or was killed): it holds what was committed so far");
  std::string line;
  for (const auto& p : parts) line += (line.empty() ? "" : "; ") + p;
  return line;
}

std::string in_progress(const RecordingHealth& h) {
  return h.still_recording ? "the run is still going (its process runs on this host): this reads the steps "
                             "committed so far"
                           : "";
}

bool session_writer_runs(const std::map<std::string, std::string>& meta) {
  const auto host = meta.find(meta_key::kHost);
  return host != meta.end() && writer_runs(static_cast<int64_t>(count_of(meta, meta_key::kPid)), host->second);
}

RecordingHealth recording_health_from_meta(const std::map<std::string, std::string>& meta) {
  RecordingHealth h;
  h.profiler_dropped_batches = count_of(meta, meta_key::kProfilerDroppedBatches);
  h.store_dropped_batches = count_of(meta, meta_key::kStoreDroppedBatches);
  h.cupti_dropped_records = count_of(meta, meta_key::kCuptiDroppedRecords);
  if (const auto it = meta.find(meta_key::kStoreLastError); it != meta.end()) h.store_error = it->second;
  if (const auto it = meta.find(meta_key::kOpSamplingFallbacks); it != meta.end())
    h.op_sampling_fallbacks = OpSamplingRule::decode(it->second).value_or(std::vector<OpSamplingRule::Fallback>{});
  h.ops_over_step_budget = count_of(meta, meta_key::kOpsOverStepBudget);
  h.step_op_budget = count_of(meta, meta_key::kStepOpBudget);
  h.first_step_over_budget = static_cast<int64_t>(count_of(meta, meta_key::kFirstStepOverBudget));
  h.interrupted_step = static_cast<int64_t>(count_of(meta, meta_key::kInterruptedStep));
  h.interrupted_step_ops = count_of(meta, meta_key::kInterruptedStepOps);
  h.interrupted_step_gpu_activities = count_of(meta, meta_key::kInterruptedStepKernels);
  h.range_samples_stopped_step = static_cast<int64_t>(count_of(meta, meta_key::kRangeSamplesStoppedStep));
  if (const auto it = meta.find(meta_key::kRangeSamplesStoppedWhy); it != meta.end())
    h.range_samples_stopped_why = it->second;
  // The profiler writes final_state when the run ends; the writer then closes the file.
  h.closed = meta.count(meta_key::kFinalState) > 0;
  h.still_recording = !h.closed && session_writer_runs(meta);
  const auto outcome = meta.find(meta_key::kStoreOutcome);
  h.store_counts_missing = h.closed && h.store_error.empty() && outcome != meta.end() &&
                           outcome->second == meta_key::kStoreOutcomeOpen;
  return h;
}

}  // namespace ampscope::profiler
