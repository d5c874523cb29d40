#pragma once
// Session files of a distributed run's ranks, written directly (no training), for
// the rank comparison's tests in report/ and ui/.
#include <string>

#include "profiler/store/session_writer.h"
#include "tests/support/test_support.h"

namespace ampscope::test {

// One rank's session: `steps` steps of `step_ms`, the loss scale halved at
// `halve_at` (0: never), and an op table with `collective_ns` in c10d ops.
inline std::string write_rank(const ScratchDir& dir, int rank, int64_t steps, double step_ms, int64_t halve_at,
                              int64_t collective_ns) {
  const std::string path = (dir / ("run.rank" + std::to_string(rank) + ".ampscope")).string();
  profiler::SessionMeta meta;
  meta.model = "MLP 2x64 (DDP)";
  meta.precision = "fp16";
  meta.scaler_enabled = true;
  auto w = profiler::SessionWriter::create(path, meta);
  for (int64_t s = 1; s <= steps; ++s) {
    profiler::StepRecord r;
    r.step = s;
    r.loss = 1.0;
    r.loss_scale = halve_at > 0 && s >= halve_at ? 32768 : 65536;
    r.skipped = r.found_inf = s == halve_at;
    r.step_time_ms = step_ms;
    w->append_step(r);
  }
  profiler::OpStats compute;
  compute.name = "aten::linear";
  compute.top_level = true;
  compute.calls = steps;
  compute.cpu_time_ns = 3 * collective_ns + 1'000'000;
  profiler::OpStats allreduce = compute;
  allreduce.name = "c10d::allreduce_";
  allreduce.cpu_time_ns = collective_ns;
  w->replace_op_stats({compute, allreduce});
  w->close();
  return path;
}

}  // namespace ampscope::test
