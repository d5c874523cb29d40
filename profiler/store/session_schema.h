#pragma once
// The on-disk layout of a session (.ampscope, one SQLite file), shared by the writer
// and the reader. docs/session-format.md is the user-facing description; keep both in step.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/records.h"
#include "profiler/session_meta_keys.h"

namespace ampscope::profiler {

// PRAGMA application_id: 'AMPS'. Marks the file as a session, so `file(1)` and the
// reader tell it from other SQLite databases.
inline constexpr int32_t kSessionApplicationId = 0x414D5053;
// PRAGMA user_version. Bump on any change an older reader would misread; additive
// changes (a new table, a new meta key) keep the number. Format 2: ops as signatures
// and calls (session_schema.cpp); a format-1 reader would call such a file corrupt.
inline constexpr int32_t kSessionFormatVersion = 2;

namespace store_detail {

// CREATE statements for the current format (kSessionFormatVersion), run in one
// transaction by SessionWriter::create.
extern const char* const kSchemaSql;

// Compact JSON, e.g. ["float16","float32"] and [[2,8],[8]]: readable in the sqlite3
// CLI and by json_extract(). Hand-written because the writer thread encodes every op.
std::string encode_strings(const std::vector<std::string>& values);
std::string encode_shapes(const std::vector<Shape>& shapes);
// The same into `out` (replacing its text): a buffer reused row after row allocates
// nothing once it has grown.
void encode_strings_into(std::string& out, const std::vector<std::string>& values);
void encode_shapes_into(std::string& out, const std::vector<Shape>& shapes);
// Lenient: malformed text yields an empty list rather than failing a whole query.
std::vector<std::string> decode_strings(std::string_view json);
std::vector<Shape> decode_shapes(std::string_view json);

// The log2 histogram as kGradBins little-endian int64 values (1024 bytes).
std::string encode_histogram(const std::array<int64_t, kGradBins>& h);
std::array<int64_t, kGradBins> decode_histogram(std::string_view blob);

}  // namespace store_detail
}  // namespace ampscope::profiler
