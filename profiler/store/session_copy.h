#pragma once
#include <string>

namespace ampscope::profiler {

// Writes a consistent copy of a session to `to` (replacing it), also while a
// writer is still appending to `from`: SQLite's VACUUM INTO reads one snapshot.
// Throws StoreError with a one-line message.
void copy_session(const std::string& from, const std::string& to);

}  // namespace ampscope::profiler
