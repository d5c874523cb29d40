#pragma once
// Shared by the exporters: writing to a path atomically, RFC 4180 fields, numbers.
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace ampscope::profiler::export_detail {

// Writes through `fn` to path.tmp, then renames it over `path`, so a failed or
// interrupted export never leaves a half file under the real name. Throws
// StoreError ("cannot write 'path': ...").
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& fn);

// RFC 4180: quoted when it holds a comma, quote, CR or LF; quotes doubled.
std::string csv_field(std::string_view text);
// Shortest text that reads back to the same double; "nan", "inf", "-inf" otherwise.
std::string number_text(double v);

}  // namespace ampscope::profiler::export_detail
