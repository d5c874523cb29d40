#pragma once
// The profiler's own threads (its worker, the session writer) yield the CPU to
// training. On a machine with few cores, a CPU-bound training step otherwise
// loses whole scheduler time slices (~4 ms) to them in the middle of an op,
// which shows up as op times hundreds of times too long. Their queues are
// bounded and count drops, so a starved worker costs data, never a stall.
namespace ampscope::profiler {

// Lowers the calling thread's scheduling priority (Linux: its nice value + 10,
// at most 19, for this thread only). Best effort: does nothing where it is not
// allowed or supported.
void lower_this_thread_priority();

}  // namespace ampscope::profiler
