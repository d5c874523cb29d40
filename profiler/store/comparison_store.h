#pragma once
// A comparison on disk: a session file (same header, same tables, left empty)
// whose meta says kind=comparison and whose comparison_* tables hold the runs.
// Written synchronously between runs, one transaction per call, so a comparison
// that is killed keeps every repeat that had finished. docs/session-format.md
// describes the tables.
#include <memory>
#include <string>
#include <vector>

#include "profiler/analysis/comparison.h"
#include "profiler/store/sqlite_util.h"

namespace ampscope::profiler {

class ComparisonWriter {
 public:
  // Writes the header fields of `comparison` (meta, warm-up, planned repeats, batch);
  // its variants are added with add_variant. Throws StoreError.
  static std::unique_ptr<ComparisonWriter> create(const std::string& path, const Comparison& comparison,
                                                  bool overwrite);
  ~ComparisonWriter();
  ComparisonWriter(const ComparisonWriter&) = delete;
  ComparisonWriter& operator=(const ComparisonWriter&) = delete;

  // The variant's description (variant, precision, tf32, scaler); its repeats come later.
  void add_variant(const VariantRun& variant);
  void add_repeat(const std::string& variant, int64_t repeat, const std::vector<StepRecord>& steps);
  void set_profile(const std::string& variant, const std::vector<OpStats>& op_stats, int64_t profiled_steps);
  void set_error(const std::string& variant, const std::string& error);
  // Whether the variant's runs had a loss scaler, learnt from its first run (a script's GradScaler).
  void set_scaler(const std::string& variant, bool scaler);
  void set_meta(const std::string& key, const std::string& value);
  const std::string& path() const { return path_; }

 private:
  ComparisonWriter(std::string path, int live_lock_fd, store_detail::Db db);
  // The flock marking the file live while the comparison runs; closed after db_
  // (declared first, destroyed last): closing any descriptor of the file drops SQLite's locks.
  struct LiveLock {
    int fd = -1;
    ~LiveLock();
  };
  std::string path_;
  LiveLock live_lock_;
  store_detail::Db db_;
};

class SessionReader;

// Whether a session file holds a comparison. Throws StoreError for a missing,
// foreign or corrupt file (the message says which).
bool is_comparison_file(const std::string& path);
bool is_comparison(const SessionReader& session);
// Throws StoreError, also when the file is a plain session.
Comparison read_comparison(const std::string& path);
// Of a file already open (open_recorded_file opens a file once for either kind).
Comparison read_comparison(const SessionReader& session);

}  // namespace ampscope::profiler
