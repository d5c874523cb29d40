#include "profiler/store/session_diff.h"

#include <limits>
#include <stdexcept>

#include "profiler/store/session_reader.h"
#include "profiler/store/session_view.h"

namespace ampscope::profiler {
namespace {

// The run's recorded ops, then their kernels (the ops' phases first).
RecordedTimes recorded_times(const SessionReader& reader) {
  RecordedTimes t;
  constexpr int64_t kFirst = std::numeric_limits<int64_t>::min(), kLast = std::numeric_limits<int64_t>::max();
  reader.for_each_op(kFirst, kLast, [&](const OpRecord& op) { t.add_op(op); });
  reader.for_each_kernel(kFirst, kLast, [&](const KernelRecord& k) { t.add_kernel(k); });
  return t;
}

}  // namespace

EagerVsCompiled diff_sessions(const std::string& eager_path, const std::string& compiled_path) {
  SessionViewOptions options;
  options.gradient_summaries = 0;
  const SessionReader eager_reader = SessionReader::open(eager_path);
  const SessionReader compiled_reader = SessionReader::open(compiled_path);
  const SessionView eager = load_session_view(eager_reader, options);
  const SessionView compiled = load_session_view(compiled_reader, options);
  for (const SessionView* s : {&eager, &compiled})
    if (s->op_stats.empty())
      throw std::runtime_error("'" + s->path +
                               "' holds no op table (a session recorded with ops: `ampscope run` or `ampscope profile`)");
  const RecordedTimes eager_times = recorded_times(eager_reader);
  const RecordedTimes compiled_times = recorded_times(compiled_reader);
  return compare_eager_and_compiled({&eager.op_stats, eager.step_timing, &eager_times},
                                    {&compiled.op_stats, compiled.step_timing, &compiled_times});
}

}  // namespace ampscope::profiler
