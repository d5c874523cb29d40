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
#include <set>
#include <string>
#include <vector>

#include "profiler/analysis/step_timing.h"
#include "profiler/records.h"

namespace ampscope::profiler {

// One run's facts, from its session (SessionView).
struct RunOps {
  const std::vector<OpStats>* ops = nullptr;
  int64_t profiled_steps = 0;  // steps the op table covers
  StepTiming timing;
};

// What one run did for one module and phase.
struct PrecisionSide {
  bool present = false;
  std::set<std::string> operand_dtypes;  // the multiplied operands' dtypes (bias and scalars left out)
  std::set<std::string> output_dtypes;
  int64_t calls = 0;
  // What autocast did there: the first of demoted, kept fp32, promoted among the
  // rows of this kind for the module and phase (eager records it on the wrapper,
  // aten::linear), else unchanged.
  OpCategory decision = OpCategory::kUnchanged;
};

enum class Agreement { kSame, kDiffers, kEagerOnly, kCompiledOnly };
std::string_view to_string(Agreement a);  // "same" | "differs" | "eager only" | "compiled only"

struct ModulePrecision {
  std::string module;  // "" for ops called outside any module
  Phase phase = Phase::kForward;
  std::string kind;    // "GEMM" | "convolution" | "attention"
  PrecisionSide eager, compiled;
  Agreement agreement = Agreement::kSame;
};

// A phase's time per step: the top-level rows' (each microsecond once), and in the
// compiled run its backward regions' (CompiledFunctionBackward runs as an autograd
// node, which no top-level row holds). Sums over the recorded steps, divided by
// their number: a call that compiled (the first) is in them.
struct PhaseTime {
  Phase phase = Phase::kForward;
  double eager_cpu_ms = 0, compiled_cpu_ms = 0;
  double eager_gpu_ms = 0, compiled_gpu_ms = 0;
};

// A compiled region of the compiled run (dynamo's "Torch-Compiled Region: G/V",
// AOTAutograd's CompiledFunction and its backward) with its mean time per call
// (the first call, which compiled, included).
struct RegionTime {
  std::string name;
  Phase phase = Phase::kForward;
  int64_t calls = 0;
  double cpu_ms_per_call = 0, gpu_ms_per_call = 0;
};

struct EagerVsCompiled {
  std::vector<ModulePrecision> modules;  // by module, phase, kind
  int same = 0, differs = 0, eager_only = 0, compiled_only = 0;
  bool compiled_run_has_graphs = false;  // any op row read from a compiled graph
  std::vector<PhaseTime> phases;         // phases either run recorded
  std::vector<RegionTime> regions;       // by time per call, largest first
  double eager_step_ms = 0, compiled_step_ms = 0;  // StepTiming::step_ms() of each
  std::optional<double> speedup() const;           // eager over compiled step time
};

EagerVsCompiled compare_eager_and_compiled(const RunOps& eager, const RunOps& compiled);

}  // namespace ampscope::profiler
