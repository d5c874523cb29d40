#pragma once
// For row_codec*.cpp only: binding and reading a row's values at consecutive
// positions, so that no codec function counts positions by hand, and done() checks
// that it bound or read exactly its table's columns: a column added to a list but
// not to its functions (or the reverse) fails the first row written or read.
#include <stdexcept>
#include <string>
#include <string_view>

#include "profiler/store/row_codec.h"

namespace ampscope::profiler::store_detail {

[[noreturn]] inline void column_count_mismatch(std::string_view verb, int count, Columns columns) {
  throw std::logic_error("row codec " + std::string(verb) + " " + std::to_string(count) + " values for " +
                         std::to_string(columns.size()) + " columns (" + column_list(columns) + ")");
}

class BindCursor {
 public:
  BindCursor(Stmt& stmt, int first) : stmt_(stmt), first_(first), next_(first) {}
  template <typename T>
  BindCursor& value(T v) {
    stmt_.bind(next_++, v);
    return *this;
  }
  BindCursor& text(std::string_view v) {
    stmt_.bind_text(next_++, v);
    return *this;
  }
  BindCursor& blob(std::string_view v) {
    stmt_.bind_blob(next_++, v.data(), v.size());
    return *this;
  }
  BindCursor& null() {
    stmt_.bind_null(next_++);
    return *this;
  }
  void done(Columns columns) const {
    if (next_ - first_ != static_cast<int>(columns.size())) column_count_mismatch("bound", next_ - first_, columns);
  }

 private:
  Stmt& stmt_;
  int first_, next_;
};

class ReadCursor {
 public:
  ReadCursor(const Stmt& stmt, int first) : stmt_(stmt), first_(first), next_(first) {}
  int64_t i64() { return stmt_.i64(next_++); }
  uint64_t u64() { return stmt_.u64(next_++); }
  int32_t i32() { return stmt_.i32(next_++); }
  bool boolean() { return stmt_.boolean(next_++); }
  double real() { return stmt_.real(next_++); }
  std::string text() { return stmt_.text(next_++); }
  std::string_view blob() { return stmt_.blob(next_++); }
  // A reserved column (written, never read).
  void skip() { ++next_; }
  void done(Columns columns) const {
    if (next_ - first_ != static_cast<int>(columns.size())) column_count_mismatch("read", next_ - first_, columns);
  }

 private:
  const Stmt& stmt_;
  int first_, next_;
};

}  // namespace ampscope::profiler::store_detail
