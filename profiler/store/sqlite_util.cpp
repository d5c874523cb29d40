#include "profiler/store/sqlite_util.h"

#include <sys/resource.h>

#include <cmath>
#include <limits>
#include <system_error>
#include <utility>

namespace ampscope::profiler::store_detail {
namespace {

// SQLite says "disk I/O error" for a write past a file-size limit (EFBIG) or any other
// failed system call: the OS error says which.
std::string with_os_error(sqlite3* db, int rc, std::string msg) {
  const int primary = rc & 0xff;
  const int error = db ? sqlite3_system_errno(db) : 0;
  if ((primary == SQLITE_IOERR || primary == SQLITE_FULL || primary == SQLITE_CANTOPEN) && error != 0) {
    msg += " (" + std::generic_category().message(error) + ")";
  } else if (primary == SQLITE_IOERR || primary == SQLITE_FULL) {
    // SQLite reports errno as it is when the error is raised, after its own clean-up
    // may have reset it: a write past a file-size limit (EFBIG) then says nothing. Name
    // the limit when there is one, so the user sees the likely cause.
    rlimit limit{};
    if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      msg += " (File too large? this process may write files of at most " + std::to_string(limit.rlim_cur) +
             " bytes: ulimit -f)";
  }
  return msg;
}

}  // namespace

std::string quoted(const std::string& path) { return "'" + path + "'"; }

Db::Db(const std::string& path, int flags) : path_(path) {
  // FULLMUTEX: a reader's const queries may come from several threads (GUI models),
  // unless the caller says its connection is one thread's at a time (NOMUTEX).
  if ((flags & SQLITE_OPEN_NOMUTEX) == 0) flags |= SQLITE_OPEN_FULLMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw StoreError("cannot open session " + quoted(path) + ": " + msg);
  }
  sqlite3_extended_result_codes(db_, 1);
}

Db::~Db() { close(); }

Db::Db(Db&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Db& Db::operator=(Db&& other) noexcept {
  if (this != &other) {
    close();
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

void Db::close() {
  if (db_) sqlite3_close_v2(db_);
  db_ = nullptr;
}

void Db::exec(const char* sql, std::string_view what) const {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = with_os_error(db_, rc, err ? err : sqlite3_errstr(rc));
    sqlite3_free(err);
    int primary = rc & 0xff;
    if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB)
      throw StoreError(quoted(path_) + " is corrupt: " + msg + " (" + std::string(what) + ")");
    throw StoreError("session " + quoted(path_) + ": " + std::string(what) + ": " + msg);
  }
}

void Db::fail(int rc, std::string_view what) const {
  std::string msg = with_os_error(db_, rc, db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
  int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB)
    throw StoreError(quoted(path_) + " is corrupt: " + msg + " (" + std::string(what) + ")");
  throw StoreError("session " + quoted(path_) + ": " + std::string(what) + ": " + msg);
}

Stmt::Stmt(const Db& db, const char* sql, std::string_view what) : db_(&db), what_(what) {
  int rc = sqlite3_prepare_v3(db.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, what_);
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

Stmt& Stmt::bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}

Stmt& Stmt::bind(int i, double v) {
  sqlite3_bind_double(stmt_, i, v);
  return *this;
}

Stmt& Stmt::bind_text(int i, std::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
  return *this;
}

Stmt& Stmt::bind_blob(int i, const void* data, size_t bytes) {
  sqlite3_bind_blob(stmt_, i, data, static_cast<int>(bytes), SQLITE_STATIC);
  return *this;
}

Stmt& Stmt::bind_null(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(stmt_);
  db_->fail(rc, what_);
}

void Stmt::run() {
  step();
  reset();
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::vector<std::string> table_columns(const Db& db, std::string_view table) {
  Stmt s(db, "SELECT name FROM pragma_table_info(?1) ORDER BY cid", "reading the table layout");
  s.bind_text(1, table);
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

void Stmt::check_number(int col) const {
  const int type = sqlite3_column_type(stmt_, col);
  if (type != SQLITE_TEXT && type != SQLITE_BLOB) return;
  const char* table = sqlite3_column_table_name(stmt_, col);
  const char* column = sqlite3_column_origin_name(stmt_, col);
  if (column == nullptr) column = sqlite3_column_name(stmt_, col);
  throw StoreError(quoted(db_->path()) + " is corrupt: " + (table ? std::string(table) + "." : std::string()) +
                   (column ? column : "?") + " holds " + (type == SQLITE_TEXT ? "text" : "a blob") +
                   " where a number belongs (was the file changed by another program?)");
}

int64_t Stmt::i64(int col) const {
  check_number(col);
  return sqlite3_column_int64(stmt_, col);
}

double Stmt::real(int col) const {
  if (is_null(col)) return std::numeric_limits<double>::quiet_NaN();
  check_number(col);
  return sqlite3_column_double(stmt_, col);
}

std::string Stmt::text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  if (!p) return {};
  return std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::string_view Stmt::blob(int col) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
  if (!p) return {};
  return std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

}  // namespace ampscope::profiler::store_detail
