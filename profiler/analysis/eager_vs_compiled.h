#pragma once
// The same model run eagerly and under torch.compile, side by side (issue 28): did
// autocast run each module's GEMMs, convolutions and attention in the same dtypes
// in both, and what did compiling change in the time of a step and of each phase?
//
// Matched per module path and phase (forward, backward) on the ops that do the
// arithmetic (op_family.h is_leaf_compute_op: eager's aten::linear is a wrapper
// around the aten::addmm that AOTAutograd's graph holds as it is). Eager rows of
// the compiled run count where its graphs have none for that module (a graph
// break runs that code eagerly); the calls a compiled region makes into ATen from
// inside (inductor's extern kernels, no module path, nested in the region) are the
// graph's own ops again and do not. Plain values, no LibTorch.
#include <cstdint>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "profiler/analysis/step_timing.h"
#include "profiler/records.h"

namespace ampscope::profiler {

// A run's time from its recorded ops and kernels, fed one by one (in any order):
// per recorded step and phase, the time inside outermost recorded ops (parent 0:
// each microsecond once, autograd's own wrappers included) and the GPU time of the
// kernels those ops launched; each compiled region call's duration. Medians over
// steps and calls leave out the step and the call that compiled, which sums over
// a short run would be all about.
struct RecordedTimes {
  void add_op(const OpRecord& op);
  void add_kernel(const KernelRecord& k);  // after every op of its step was added

  struct Call {
    int64_t start_ns = 0;
    double ms = 0;
  };
  std::map<Phase, std::map<int64_t, double>> cpu_ms;  // phase -> step -> ms
  std::map<Phase, std::map<int64_t, double>> gpu_ms;
  std::set<int64_t> steps;                            // steps with recorded ops
  std::map<std::string, std::pair<Phase, std::vector<Call>>> region_calls;
  std::unordered_map<uint64_t, Phase> phase_of_op;
};

// One run's facts, from its session.
struct RunOps {
  const std::vector<OpStats>* ops = nullptr;  // the op table
  StepTiming timing;
  const RecordedTimes* times = nullptr;
};

// What one run did for one module and phase.
struct PrecisionSide {
  bool present = false;
  // The dtypes the multiplied operands were computed in (bias and scalars left out):
  // an op autocast cast for ran in its output's dtype, whatever it was called with.
  std::set<std::string> operand_dtypes;
  std::set<std::string> output_dtypes;
  int64_t calls = 0;
  // What autocast did there: the first of demoted, kept fp32, promoted among the
  // rows of this kind for the module and phase (eager records it on the wrapper,
  // aten::linear), else unchanged.
  OpCategory decision = OpCategory::kUnchanged;
};

// "bfloat16 -> bfloat16 (demoted)": operand dtypes, output dtypes, and autocast's
// decision where it changed anything; "-" where the run has none. What `ampscope
// diff` prints and the GUI's table shows (with its own arrow and dash).
std::string precision_side_text(const PrecisionSide& side, std::string_view arrow = "->", std::string_view none = "-");

enum class Agreement { kSame, kDiffers, kEagerOnly, kCompiledOnly };
std::string_view to_string(Agreement a);  // "same" | "differs" | "eager only" | "compiled only"

struct ModulePrecision {
  std::string module;  // "" for ops called outside any module
  Phase phase = Phase::kForward;
  std::string kind;    // "GEMM" | "convolution" | "attention"
  PrecisionSide eager, compiled;
  Agreement agreement = Agreement::kSame;
};

// A phase's time per step: medians over each run's recorded steps (0 in a step
// without ops of the phase).
struct PhaseTime {
  Phase phase = Phase::kForward;
  double eager_cpu_ms = 0, compiled_cpu_ms = 0;
  double eager_gpu_ms = 0, compiled_gpu_ms = 0;
};

// A compiled region of the compiled run (dynamo's "Torch-Compiled Region: G/V",
// AOTAutograd's CompiledFunction and its backward): the median call, and the first
// recorded call apart (where the run's first step was recorded, it compiled).
struct RegionTime {
  std::string name;
  Phase phase = Phase::kForward;
  int64_t calls = 0;
  double median_ms = 0, first_call_ms = 0;
};

struct EagerVsCompiled {
  std::vector<ModulePrecision> modules;  // by module, phase, kind
  int same = 0, differs = 0, eager_only = 0, compiled_only = 0;
  bool compiled_run_has_graphs = false;  // any op row read from a compiled graph
  std::vector<PhaseTime> phases;         // phases either run recorded
  std::vector<RegionTime> regions;       // by median call, largest first
  double eager_step_ms = 0, compiled_step_ms = 0;  // StepTiming::step_ms() of each
  std::optional<double> speedup() const;           // eager over compiled step time
};

EagerVsCompiled compare_eager_and_compiled(const RunOps& eager, const RunOps& compiled);

}  // namespace ampscope::profiler
