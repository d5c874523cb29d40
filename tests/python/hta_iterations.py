"""Parses a directory of Chrome traces with Holistic Trace Analysis (PyPI
HolisticTraceAnalysis) and prints, for rank 0, the number of iterations HTA
found and their numbers: `count n1 n2 ...`. For tests/profiler_core/test_export_chrome_trace.cpp."""
import logging
import sys

logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis  # noqa: E402

# HTA leaves out the last ProfilerStep by default (torch.profiler's last one is
# often cut short); ampscope's steps are whole, so count them all.
analyzer = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
trace = analyzer.t.get_trace(0)
iterations = sorted(int(i) for i in trace["iteration"].unique() if i >= 0)
print(len(iterations), *iterations)
