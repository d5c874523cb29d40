#include "profiler/export/export_util.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <fstream>

#include "profiler/store/sqlite_util.h"

namespace ampscope::profiler::export_detail {

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& fn) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw StoreError("cannot write '" + path + "': " + std::generic_category().message(errno));
    try {
      fn(out);
    } catch (...) {
      out.close();
      std::remove(tmp.c_str());
      throw;
    }
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw StoreError("cannot write '" + path + "': write failed (disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::generic_category().message(errno);
    std::remove(tmp.c_str());
    throw StoreError("cannot write '" + path + "': " + why);
  }
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string number_text(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

}  // namespace ampscope::profiler::export_detail
