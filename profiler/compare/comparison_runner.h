#pragma once
// Runs a precision comparison (see profiler/analysis/comparison.h): for each
// repeat, every variant in turn (interleaved, so drift of the machine hits all
// variants alike), each an unprofiled training run of the same config and seed;
// then one short profiled pass per variant for the per-op table. Results are
// written to the comparison file after every run, so a stopped or killed
// comparison keeps what had finished.
//
// Threads: run() works on the calling thread (the CLI's main thread, a GUI
// worker); each training run has the engine's own thread. request_stop() may be
// called from any thread.
#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/config.h"
#include "profiler/analysis/comparison.h"

namespace ampscope::profiler {

struct ComparisonOptions {
  engine::TrainConfig base;  // precision, allow_tf32 and use_scaler are set per variant
  std::vector<std::string> variants{"fp32", "bf16"};
  int64_t repeats = 3;
  int64_t warmup_steps = 5;   // leading steps of each run left out of the timing
  int64_t profile_steps = 3;  // steps recorded by the profiled pass, after warm-up; 0 = no pass
  // Inference instead of training (Comparison::inference): per repeat and variant,
  // base.steps timed batches (the first warmup_steps left out of the timing) on the
  // calling thread; profile_steps is not used.
  bool inference = false;
  std::string out_path;       // "" = keep nothing on disk
  bool overwrite = false;
};

// A script's comparison (`ampscope run --compare`) stops each run after this many steps
// unless --max-steps says otherwise: the script's own length is unknown, and may be endless.
inline constexpr int64_t kDefaultComparedSteps = 30;

struct ComparisonProgress {
  std::string variant;
  int64_t repeat = 0;          // 0-based; -1 for the profiled pass
  int64_t run_index = 0;       // 0-based over all runs of the comparison
  int64_t run_count = 0;
  int64_t step = 0, steps = 0; // within the current run
  double loss = 0.0;
  std::string finished_message;  // set once when a run ends: "fp32 #1: median 3.1 ms, loss 2.30"
  // With finished_message: every result so far (the run that just ended included).
  // Valid only during the callback; copy what is kept.
  const Comparison* so_far = nullptr;
};

// "fp32,bf16" -> {"fp32","bf16"}; throws engine::ConfigError for an unknown name or a repeat,
// naming `flag` (the option the list came from).
std::vector<std::string> parse_variants(std::string_view list, std::string_view flag = "--precisions");
// The base config set up for one variant.
engine::TrainConfig variant_config(const engine::TrainConfig& base, std::string_view variant);
// Throws engine::ConfigError with a one-line message for impossible settings
// (tf32 on the CPU, warm-up not shorter than the run, no variants, ...).
void validate(const ComparisonOptions& options);

class ComparisonRunner {
 public:
  explicit ComparisonRunner(ComparisonOptions options);

  // Blocks until every run finished or a stop was requested. A variant whose run
  // fails (diverges, runs out of memory) gets its error recorded and no further
  // runs; the others go on. Throws ConfigError/StoreError before any run starts.
  Comparison run(const std::function<void(const ComparisonProgress&)>& progress = {});
  void request_stop() { stop_requested_.store(true); }
  bool stopped() const { return stop_requested_.load(); }

 private:
  ComparisonOptions options_;
  std::atomic<bool> stop_requested_{false};
};

}  // namespace ampscope::profiler
