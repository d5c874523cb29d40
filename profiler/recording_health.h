#pragma once
// What a recording lost, said out loud. Every queue between the training
// thread and the disk drops rather than waits, and the session writer goes on
// after a failed write: each of those is a count or an error somewhere. This
// gathers them into one value and one line, shown at the end of
// `ampscope profile`, by `ampscope summary` (from the session's meta) and in
// the GUI's status bar. No LibTorch.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "profiler/op_sampling_rule.h"

namespace ampscope::profiler {

struct RecordingHealth {
  uint64_t dropped_events = 0;            // run events a follower's queue dropped (the plots miss steps)
  uint64_t profiler_dropped_batches = 0;  // record batches the profiler's queue dropped
  uint64_t store_dropped_batches = 0;     // batches the session writer did not store (full queue, failed write)
  uint64_t cupti_dropped_records = 0;     // GPU activity records CUPTI dropped
  std::string store_error;                // the session writer's last error ("database or disk is full")
  bool closed = true;                     // false: the session was never closed (the process was killed)
  // Not closed because its run goes on: its writer runs on this host (the meta's pid and
  // host). Nothing is lost; what was committed so far is all it holds yet.
  bool still_recording = false;
  // The run ended, but the writer could not store its closing counts (store_outcome
  // "open"): a write failed at the end, so its losses are not counted.
  bool store_counts_missing = false;
  // When the capture fell behind, it recorded the ops of fewer steps (never steps themselves).
  std::vector<OpSamplingRule::Fallback> op_sampling_fallbacks;
  // Ops over the per-thread, per-step budget: counted, not recorded.
  uint64_t ops_over_step_budget = 0;
  uint64_t step_op_budget = 0;
  int64_t first_step_over_budget = 0;
  // A stop inside a step: that step (0: none) and what of it was not kept.
  int64_t interrupted_step = 0;
  uint64_t interrupted_step_ops = 0;
  uint64_t interrupted_step_gpu_activities = 0;
  // Range samples stopped at this step (0: never): one failed on the device and was dropped
  // (profiler/capture/sample_failure.h); why.
  int64_t range_samples_stopped_step = 0;
  std::string range_samples_stopped_why;

  bool lost_anything() const {
    return dropped_events + profiler_dropped_batches + store_dropped_batches + cupti_dropped_records +
                   ops_over_step_budget + interrupted_step_ops + interrupted_step_gpu_activities >
               0 ||
           range_samples_stopped_step > 0 ||
           !store_error.empty() || !op_sampling_fallbacks.empty() || store_counts_missing;
  }
};

// One line, empty when nothing was lost: "the session writer failed (database
// or disk is full) and did not store 12 batches of records; ...".
std::string describe(const RecordingHealth& health);
// For a session whose run still goes on (still_recording), what a reader reads: "the run is
// still going ...: this reads the steps committed so far"; "" otherwise. Not a loss.
std::string in_progress(const RecordingHealth& health);

// From the keys the profiler and the session writer leave in a session's meta
// when it is closed (profiler/session_meta_keys.h).
RecordingHealth recording_health_from_meta(const std::map<std::string, std::string>& meta);
// Whether the process that writes the session (its meta's pid and host) runs, on this host.
bool session_writer_runs(const std::map<std::string, std::string>& meta);

}  // namespace ampscope::profiler
