#pragma once
// A JSON summary of a session for scripts and CI: meta, CPU/GPU time and cast tax per
// autocast category (top-level op calls) with shares, top ops and kernels, the
// loss / loss-scale story, the gradient range at the latest sample, and precision
// readiness per layer (verdicts, what decided them, every format's metrics per
// tensor, the thresholds). Fields are documented in
// docs/session-format.md; NaN and infinities are written as null.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "profiler/store/session_view.h"

namespace ampscope::profiler {

// Of a view loaded with at least top_n top kernels (SessionViewOptions::top_kernels).
nlohmann::ordered_json session_summary(const SessionView& session, size_t top_n = 10);
void export_json_summary(const SessionView& session, std::ostream& out, size_t top_n = 10);
// Throws StoreError when the file cannot be written.
void export_json_summary(const SessionView& session, const std::string& path, size_t top_n = 10);
// A summary made above (with what the CLI adds: the report's findings), written as the above.
void write_json_summary(const nlohmann::ordered_json& summary, const std::string& path);

}  // namespace ampscope::profiler
