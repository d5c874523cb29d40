#pragma once
// Records shaped as a GPU capture hands them to CompiledKernelTimes
// (profiler/analysis/compiled_kernels.h): a graph's ops, the kernels they launched,
// and the calls inductor listed. For tests/profiler_core/.
#include <string>
#include <vector>

#include "profiler/analysis/compiled_kernels.h"

namespace ampscope::test::compiled {

inline profiler::OpRecord op(uint64_t id, uint64_t parent, const std::string& name, int64_t step, int64_t start,
                             int64_t end, profiler::Phase phase) {
  profiler::OpRecord r;
  r.id = id;
  r.parent_id = parent;
  r.name = name;
  r.step = step;
  r.phase = phase;
  r.start_ns = start;
  r.end_ns = end;
  return r;
}

inline profiler::KernelRecord kernel(uint64_t op_id, const std::string& name, int64_t start, int64_t end,
                                     bool tensor_cores) {
  profiler::KernelRecord k;
  k.op_id = op_id;
  k.name = name;
  k.start_ns = start;
  k.end_ns = end;
  k.tensor_core_by_name = tensor_cores;
  return k;
}

inline profiler::CompiledKernelRow listed(const std::string& kind, const std::string& name, int64_t ordinal,
                                          int64_t graph, profiler::Phase phase) {
  profiler::CompiledKernelRow r;
  r.graph = graph;
  r.phase = phase;
  r.kind = kind;
  r.kernel = name;
  r.ordinal = ordinal;
  return r;
}

inline std::vector<const profiler::KernelRecord*> pointers(const std::vector<profiler::KernelRecord>& kernels) {
  std::vector<const profiler::KernelRecord*> out;
  for (const profiler::KernelRecord& k : kernels) out.push_back(&k);
  return out;
}

}  // namespace ampscope::test::compiled
