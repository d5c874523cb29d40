#pragma once
// Exporting a recorded file, as `ampscope export` and the GUI's File → Export data do it: one
// dispatch, so both write the same files. A session exports as a Chrome/Perfetto trace, CSV
// tables, a JSON summary with the report's findings, or TensorBoard events; a precision
// comparison as its JSON summary (with its findings) or its CSV tables, and has no trace or
// events to export.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ampscope::profiler {

enum class ExportFormat { kChromeTrace, kCsv, kJson, kTensorBoard };

// "chrome", "csv", "json", "tensorboard" (the CLI's --format); nullopt for another name.
std::optional<ExportFormat> export_format_named(std::string_view name);

// The files an export writes, for a caller's overwrite checks. `target` is the file (trace,
// JSON summary), the tables' prefix (CSV: TARGET.ops.csv, ...) or the log directory (TensorBoard,
// the one entry).
std::vector<std::string> export_outputs(ExportFormat format, bool comparison, const std::string& target);

// Why a comparison cannot be exported in `format` (a trace, TensorBoard events), in one line
// naming `source`; "" when it can.
std::string comparison_export_refusal(const std::string& source, ExportFormat format);

// Steps of a session's trace to keep (0: from the first / to the last).
struct ExportStepRange {
  int64_t first_step = 0;
  int64_t last_step = 0;
};

// Writes `source` (a session or comparison file) in `format` to `target` and returns what it
// wrote, as a line for the user ("wrote x.trace.json (open it in https://ui.perfetto.dev ...)").
// Throws std::invalid_argument (comparison_export_refusal) for a comparison's trace or events,
// StoreError for a file it cannot read or write.
std::string export_recorded_file(const std::string& source, ExportFormat format, const std::string& target,
                                 ExportStepRange steps = {});

}  // namespace ampscope::profiler
