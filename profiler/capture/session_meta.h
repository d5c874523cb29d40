#pragma once
// A session's description (SessionMeta) from the engine's run-start event, and
// what the hardware behind a device string is called: the name users know and
// the GPU peak table matches ("NVIDIA H100 80GB HBM3", "AMD EPYC 7B13").
#include <string>

#include "engine/events.h"
#include "profiler/records.h"

namespace ampscope::profiler {

// device: "cpu", "cuda", "cuda:N". Falls back to the device string itself when the
// name cannot be read (no CUDA runtime in this build, /proc unreadable).
std::string device_model_name(const std::string& device);

std::string utc_now_iso8601();

// Everything but gpu_tracing, which the caller knows.
SessionMeta make_session_meta(const engine::RunStartedEvent& run);

}  // namespace ampscope::profiler
