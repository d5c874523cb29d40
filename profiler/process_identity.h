#pragma once
// Which process wrote a session, and whether it still runs: the profiler stores
// its pid and host in the session's meta, and a viewer on the same host (the GUI
// following a live session) checks the pid. No LibTorch, no Qt.
#include <cstdint>
#include <string>

namespace ampscope::profiler {

int64_t current_process_id();
std::string current_host_name();  // "" when the system will not say
// Whether a process with that pid runs on this host (false for pid <= 0).
bool process_runs(int64_t pid);
// Whether a session's writer (its meta's pid and host) runs: on this host, with that pid.
// A writer on another host cannot be checked: false.
bool writer_runs(int64_t pid, const std::string& host);

}  // namespace ampscope::profiler
