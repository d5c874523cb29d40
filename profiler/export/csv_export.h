#pragma once
// CSV tables of a session (RFC 4180: CRLF rows, fields with commas, quotes or line
// breaks quoted, quotes doubled). Lists (dtypes, shapes) are compact JSON in one field.
#include <ostream>
#include <string>

#include "profiler/store/session_reader.h"

namespace ampscope::profiler {

// The aggregated op table (op_stats), one row per op signature, category and
// top_level (the last column: true for calls made by model/loss/optimizer code).
void export_op_table_csv(const SessionReader& session, std::ostream& out);
// Every kernel / memcpy / memset, by start time; streamed, not loaded at once.
void export_kernels_csv(const SessionReader& session, std::ostream& out);
void export_steps_csv(const SessionReader& session, std::ostream& out);
// One row per sampled (step, parameter): the GradientSample scalars, with the
// shares of every format (fp16_*, bf16_*, fp8_e4m3_*, fp8_e5m2_*; "nan" where a
// session from before they were measured lacks them). The histogram stays in the session.
void export_gradients_csv(const SessionReader& session, std::ostream& out);

// Path versions: throw StoreError when the file cannot be written.
void export_op_table_csv(const SessionReader& session, const std::string& path);
void export_kernels_csv(const SessionReader& session, const std::string& path);
void export_steps_csv(const SessionReader& session, const std::string& path);
void export_gradients_csv(const SessionReader& session, const std::string& path);

}  // namespace ampscope::profiler
