#pragma once
// A seam for the trainer's race tests, as kineto puts CUPTI behind one: the
// pause gate's window between reading "no stop requested" and starting to wait
// is nanoseconds wide, too narrow for a test to hit by timing. A test widens it
// here to show that a stop in that window is never lost (tests/engine/test_trainer.cpp).
#include <atomic>

namespace ampscope::engine::test_hooks {

// Called on the training thread by the pause gate, with the control mutex held,
// after the gate found the run paused and not stopped and before it waits.
// Null (the default) outside tests; only read while a run is paused.
inline std::atomic<void (*)()> pause_gate_before_wait{nullptr};

}  // namespace ampscope::engine::test_hooks
