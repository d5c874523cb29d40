#pragma once
// The profiler's own threads (its worker, the session writer) yield the CPU to
// training. On a machine with few cores, a CPU-bound training step otherwise
// loses whole scheduler time slices (~4 ms) to them in the middle of an op,
// which shows up as op times hundreds of times too long. Their queues are
// bounded and count drops, so a starved worker costs data, never a stall.
#include <thread>

namespace ampscope::profiler {

// Lowers the calling thread's scheduling priority (Linux: its nice value + 10,
// at most 19, for this thread only). Best effort: does nothing where it is not
// allowed or supported.
void lower_this_thread_priority();

// Names a thread (Linux: at most 15 characters) from the thread that started it, so the
// name is there as soon as the thread is, and top -H, perf and gdb tell the training
// thread from the profiler's: "amp-worker", "amp-writer", "amp-cupti".
void name_thread(std::thread& thread, const char* name);

}  // namespace ampscope::profiler
