#pragma once
// Time inside torch.compile'd code, per kernel inductor generated, with the graph
// ops each fused (python/ampscope/_compiled_kernels.py lists them).
//
// Each compiled graph's call runs inside a recorded op of ampscope's,
// `ampscope::compiled_graph::<n>`; its direct children are the graph's calls in
// order: the RecordFunctions inductor's kernel profiling opens around each
// generated kernel (`graph_0_cpp_fused_gelu_1`) and the ATen ops of its extern
// calls (aten::addmm). CompiledKernelTimes times those children by (graph, name,
// ordinal among the graph's calls of that name) and the graph's call itself;
// join_compiled_kernels() puts the times on the calls the Python side listed.
// Pure data, no LibTorch.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "profiler/analysis/op_aggregator.h"
#include "profiler/records.h"

namespace ampscope::profiler {

// kCompiledGraphOpPrefix (records.h) names the op around each graph's call.

// Kinds of CompiledKernelRow.
inline constexpr const char* kCompiledGraphCall = "graph";    // the graph's whole call
inline constexpr const char* kCompiledFusedKernel = "fused";  // a kernel inductor generated
inline constexpr const char* kCompiledExternKernel = "extern";  // an ATen op it calls (GEMM, conv)
// A recorded op under the graph's call that the listing does not name (a graph
// compiled without provenance, an op the generated wrapper runs itself).
inline constexpr const char* kCompiledOtherCall = "other";
// Inductor tuning a kernel in a graph's first call: Triton's autotuner launches a listed
// kernel once per config it times, and resets the buffers the kernel writes between
// runs (aten::zero_, clone, copy_). One row per graph and name, all of its time in first
// calls; a kernel's row carries the graph ops the kernel computes. (On an H200's GPT-2
// these were 63 of 655 ms of compiled GPU time, 457 of 934 ms with CUDA graphs: shown as
// "other", the compiled time looked unattributed.)
inline constexpr const char* kCompiledTuningCall = "tuning";

// A graph op a kernel computes, as _compiled.py read it from the AOTAutograd graph.
struct CompiledFusedOp {
  std::string node;      // the graph node ("addmm_1")
  std::string name;      // its op ("aten::addmm"); empty for a node inductor made itself
  std::string module;
  std::string category;  // OpCategory's name, as the op table's rows store it
  std::vector<DtypeName> input_dtypes;
  std::vector<DtypeName> output_dtypes;
};

struct CompiledKernelRow {
  int64_t graph = 0;  // _compiled.py's number of the AOTAutograd graph
  Phase phase = Phase::kOther;
  std::string kind;    // kCompiledGraphCall, kCompiledFusedKernel, ...
  std::string kernel;  // the recorded name: "graph_0_cpp_fused_gelu_1", "aten::addmm"; "" for the graph
  int64_t ordinal = 0;
  std::vector<CompiledFusedOp> ops;
  int64_t calls = 0;        // on sampled steps
  int64_t cpu_time_ns = 0;  // inclusive
  // GPU kernels it ran on sampled steps (CUPTI): a Triton kernel is one; an extern
  // call's are its ATen op's; a graph's are all of its call's, CUDA-graph replays too.
  int64_t kernels = 0, tensor_core_kernels = 0, gpu_time_ns = 0;
  int64_t first_call_gpu_ns = 0;  // of gpu_time_ns, in the graph's first call (CompiledKernelTimes::Time)
};

class CompiledKernelTimes {
 public:
  // Ops are remembered for as long as the op table remembers them (OpAggregator):
  // CUPTI hands a buffer over when it fills, which under CUDA graphs (a few hundred
  // kernels a step) is many steps after the kernels ran.
  explicit CompiledKernelTimes(int64_t op_memory_steps = kOpMemorySteps) : op_memory_steps_(op_memory_steps) {}
  // The calls and kernels of this step (the warm-up step the op table may leave out,
  // warmup_step.h) are counted in each Time's `apart` as well.
  void keep_step_apart(int64_t step) { step_apart_ = step; }
  // Records of whole steps: a graph's op and its children arrive together.
  void add_ops(const std::vector<OpRecord>& ops);
  // GPU kernels, once the ops that launched them were added (OpAggregator settles a
  // kernel only after its op). A kernel launched by a graph's op itself (a Triton
  // kernel: no ATen op of its own; every kernel of a CUDA graph's replay) counts under
  // its own name, by its place among the call's launches of that name; one launched
  // inside a child op of the graph (an extern GEMM and whatever that op calls) under
  // that child; every one under the graph.
  void add_kernels(const std::vector<const KernelRecord*>& kernels);
  struct Time {
    Phase phase = Phase::kOther;
    int64_t calls = 0, cpu_time_ns = 0;
    int64_t kernels = 0, tensor_core_kernels = 0, gpu_time_ns = 0;
    // Of gpu_time_ns, what ran in the graph's first call seen: there inductor tunes
    // its kernels (each launched many times) and CUDA graphs are warmed up.
    int64_t first_call_gpu_ns = 0;
    // Of a child op's calls, those that ran a kernel: not the ones a CUDA graph
    // captured (a replay runs their kernels, and counts the call then).
    int64_t calls_with_kernels = 0;
    // Of the figures above, the step kept apart's (keep_step_apart).
    struct Apart {
      int64_t calls = 0, cpu_time_ns = 0, kernels = 0, tensor_core_kernels = 0, gpu_time_ns = 0;
      int64_t first_call_gpu_ns = 0;
    } apart;
  };
  using Key = std::tuple<int64_t, std::string, int64_t>;  // (graph, name, ordinal); name "" is the graph
  // As recorded: a CUDA graph's replayed library kernels under their own names
  // (in a replay the graph's op launches every kernel itself).
  const std::map<Key, Time>& times() const { return times_; }
  // The same with each replayed library kernel moved to the extern call that launched
  // it when the graph ran eagerly (before CUDA graphs recorded it): the kernels an
  // eager call's child ops launched, in order, aligned by name with the replay's.
  // An alignment is kept until either side grows: the tables are saved every two
  // seconds, and aligning a GPT-2's graphs took the worker two seconds each time.
  // Not thread-safe (the worker's alone, like everything here).
  std::map<Key, Time> attributed_times() const;
  bool empty() const { return times_.empty(); }

 private:
  struct Launcher {  // an op inside a graph's call: the graph's op itself, or under one of its children
    int64_t step = 0;
    uint64_t call = 0;       // the graph's op id
    Key child;               // the child it is or is under; name "" for the graph's op itself
    uint64_t child_op = 0;   // that child's op id
    bool launched = false;   // (on a child's own entry) a kernel of it arrived
  };
  struct CallLaunches {
    int64_t graph = 0;
    bool first = false;  // the graph's first call seen
    std::map<std::string, int64_t, std::less<>> seen;  // kernel name -> launches so far
    int64_t own_launches = 0;                          // kernels the graph's op launched itself so far
  };
  // A graph's first call whose child ops launched kernels: what each replayed library
  // kernel is (the eager run CUDA graph trees do before recording).
  struct EagerLaunch {
    std::string name;
    Key child;  // the child op it ran under
    uint32_t weight = 1;  // how much matching it counts in the alignment: a kernel more than a copy
  };
  struct EagerCall {
    uint64_t call = 0;
    std::vector<EagerLaunch> kernels;  // in launch order
  };
  struct OwnLaunch {
    int64_t place = 0;  // among the call's own launches
    uint32_t weight = 1;
  };
  // Where each replayed key's time goes: (the replayed key, the child that launched it eagerly).
  using ReplayMoves = std::vector<std::pair<Key, Key>>;
  const ReplayMoves& replay_moves(int64_t graph, const EagerCall& eager) const;
  void forget_before(int64_t step);

  int64_t op_memory_steps_;
  int64_t step_apart_ = 0;  // 0: none
  std::map<Key, Time> times_;
  std::map<Key, OwnLaunch> own_launch_place_;     // a key the graph's op launched -> its place in the call
  std::map<int64_t, EagerCall> eager_calls_;      // by graph
  std::map<int64_t, uint64_t> first_calls_;       // graph -> its first call's op id
  std::map<uint64_t, Launcher> launchers_;        // by op id, for the last op_memory_steps steps
  std::map<uint64_t, CallLaunches> launches_;     // by the graph's op id
  // replay_moves' last alignment per graph, with the sizes of the two sides it aligned
  // (both only grow: a new replayed key, or more of the eager call's kernels).
  struct Alignment {
    size_t eager_kernels = 0, replayed = 0;
    ReplayMoves moves;
  };
  mutable std::map<int64_t, Alignment> alignments_;
};

// The listed calls (kind, kernel, ordinal, ops; graph and phase) with their times,
// a kCompiledGraphCall row per graph, kCompiledTuningCall rows for a first call's
// tuning and kCompiledOtherCall rows for the other timed children nobody listed.
// Ordered by graph, then as listed.
// `without_apart`: the times of every step but the one kept apart (what the op table covers
// where it leaves the warm-up step out); rows are told tuning from other by every step's
// times, and an unlisted row left without calls or time is dropped.
std::vector<CompiledKernelRow> join_compiled_kernels(const std::vector<CompiledKernelRow>& listed,
                                                     const CompiledKernelTimes& times, bool without_apart = false);

// One signature of torch.compile's graphs as an op table row (OpStats::compiled, no
// calls yet), and how often each graph holds it. The graphs are fixed once compiled;
// their calls grow every step: compiled_op_rows() makes the rows from both, so a
// step's new counts cross threads as a few integers, not the whole table again.
struct CompiledOpSignature {
  OpStats row;
  std::vector<std::pair<size_t, int64_t>> occurrences;  // (graph, how often it holds the signature)
};
// calls = the sum over graphs of occurrences times the graph's calls (graph_calls,
// by graph; a graph past its end has none); cast calls for autocast's casts.
std::vector<OpStats> compiled_op_rows(const std::vector<CompiledOpSignature>& signatures,
                                      const std::vector<int64_t>& graph_calls);

// How much of the compiled graphs' time the rows name: the graphs' calls (their
// marker ops, inclusive), and within them the fused and extern kernels' and the
// other recorded ops'. The rest is the generated wrapper's own Python (buffer
// allocation, argument checks) and the RecordFunctions' cost.
// On a GPU the same for the kernels' GPU time: the graphs' (every kernel their calls
// ran), and within it the listed calls' and the rest's (kernels the listing does not
// name: a graph compiled without provenance, inductor tuning a kernel by launching it
// many times in a graph's first call), and the part of each that ran in first calls.
struct CompiledTimeShare {
  int64_t graph_ns = 0, kernel_ns = 0, tuning_ns = 0, other_ns = 0;
  int64_t gpu_graph_ns = 0, gpu_kernel_ns = 0, gpu_tuning_ns = 0, gpu_other_ns = 0;
  int64_t gpu_graph_first_ns = 0, gpu_kernel_first_ns = 0;  // of the two above, in the graphs' first calls
  int64_t calls = 0, graphs = 0;                              // the graphs' calls, and how many graphs
  double kernel_share() const { return graph_ns > 0 ? static_cast<double>(kernel_ns) / static_cast<double>(graph_ns) : 0.0; }
  double gpu_kernel_share() const {
    return gpu_graph_ns > 0 ? static_cast<double>(gpu_kernel_ns) / static_cast<double>(gpu_graph_ns) : 0.0;
  }
  // Of the graphs' GPU time, what their rows put on graph ops: the listed kernels' and
  // the first calls' tuning of them.
  double gpu_attributed_share() const {
    return gpu_graph_ns > 0 ? static_cast<double>(gpu_kernel_ns + gpu_tuning_ns) / static_cast<double>(gpu_graph_ns)
                            : 0.0;
  }
  // The same after each graph's first call: what training with the compiled model
  // costs from then on. False when no graph was called twice on the GPU.
  bool has_later_calls() const { return calls > graphs && gpu_graph_ns > gpu_graph_first_ns; }
  double gpu_kernel_share_after_first_calls() const {
    return has_later_calls() ? static_cast<double>(gpu_kernel_ns - gpu_kernel_first_ns) /
                                   static_cast<double>(gpu_graph_ns - gpu_graph_first_ns)
                             : 0.0;
  }
};
CompiledTimeShare compiled_time_share(const std::vector<CompiledKernelRow>& rows);

// The fused and extern kernels' time by what each computes, for category_totals():
// a kernel counts under the autocast decision among its ops (demoted, kept fp32,
// promoted: the one most of its ops have, the first of those on a tie), else under
// unchanged when it computes anything, else under its casts' category (a kernel of
// casts alone). A cast fused into another op's kernel adds little to it, so it does not
// take the kernel's time. The output dtype is that of the kernel's last op in its
// category. Kernels without ops (no provenance), tuning and other calls stay where
// they are: in the region's row.
std::vector<CompiledComputeTime> compiled_compute_time(const std::vector<CompiledKernelRow>& rows);

}  // namespace ampscope::profiler
