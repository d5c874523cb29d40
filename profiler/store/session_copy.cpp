#include "profiler/store/session_copy.h"

#include <sqlite3.h>
#include <unistd.h>

#include <memory>

#include "profiler/store/session_reader.h"
#include "profiler/store/sqlite_util.h"

namespace ampscope::profiler {

void copy_session(const std::string& from, const std::string& to) {
  (void)SessionReader::open(from);  // refuses anything that is not a session, with its message
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(from.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    const std::string message = raw ? sqlite3_errmsg(raw) : "out of memory";
    sqlite3_close(raw);
    throw StoreError("cannot open '" + from + "': " + message);
  }
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
  const std::string tmp = to + ".tmp";
  ::unlink(tmp.c_str());
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db.get(), "VACUUM INTO ?1", -1, &stmt, nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(stmt, 1, tmp.c_str(), -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(stmt);
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) {
    ::unlink(tmp.c_str());
    throw StoreError("cannot write '" + to + "': " + sqlite3_errmsg(db.get()));
  }
  if (::rename(tmp.c_str(), to.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw StoreError("cannot write '" + to + "'");
  }
}

}  // namespace ampscope::profiler
