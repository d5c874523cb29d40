#pragma once
// Shared by the exporters and the CLI's per-step files: writing an output file with
// every write checked, RFC 4180 fields, numbers.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>

namespace ampscope::profiler::export_detail {

// Writes through `fn` to a new temporary file in path's folder (".NAME.XXXXXX.tmp"),
// then renames it over `path`, so a failed or interrupted export never leaves a half
// file under the real name. Every write, the flush and the close are checked: a full
// disk, a file-size limit (EFBIG: main() ignores SIGXFSZ) or an I/O error throws
// StoreError ("cannot write 'path': No space left on device") and removes the
// temporary file, as does an exception from `fn`. A path that exists and is not a
// regular file (/dev/null, /dev/full, a FIFO) cannot be renamed over: it is written
// in place, with the same checks.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& fn);

// A file written in place, line by line, for a run that must keep what it wrote if
// it is killed (--metrics): each append goes to the kernel at once and is checked.
class AppendedFile {
 public:
  // Creates or truncates `path`; throws StoreError naming it and the OS error.
  explicit AppendedFile(const std::string& path);
  ~AppendedFile();
  AppendedFile(const AppendedFile&) = delete;
  AppendedFile& operator=(const AppendedFile&) = delete;

  // Throws StoreError ("cannot write 'path': File too large") when the write fails.
  void append(std::string_view bytes);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// RFC 4180: quoted when it holds a comma, quote, CR or LF; quotes doubled.
std::string csv_field(std::string_view text);
// Shortest text that reads back to the same double; "nan", "inf", "-inf" otherwise.
std::string number_text(double v);

// One CSV row, its fields comma-separated, ended with CRLF when it goes out of scope.
class CsvRow {
 public:
  explicit CsvRow(std::ostream& out) : out_(out) {}
  ~CsvRow() { out_ << "\r\n"; }
  CsvRow(const CsvRow&) = delete;
  CsvRow& operator=(const CsvRow&) = delete;
  CsvRow& text(std::string_view v) { return raw(csv_field(v)); }
  CsvRow& num(int64_t v) { return raw(std::to_string(v)); }
  CsvRow& num(double v) { return raw(number_text(v)); }
  CsvRow& flag(bool v) { return raw(v ? "true" : "false"); }

 private:
  CsvRow& raw(const std::string& v) {
    if (!first_) out_ << ',';
    first_ = false;
    out_ << v;
    return *this;
  }
  std::ostream& out_;
  bool first_ = true;
};

// A CSV header row.
void csv_header(std::ostream& out, std::initializer_list<std::string_view> names);

}  // namespace ampscope::profiler::export_detail
