#include "profiler/store/comparison_store.h"

#include <unistd.h>

#include <algorithm>
#include <map>

#include "profiler/store/row_codec.h"
#include "profiler/session_meta_keys.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_writer.h"

namespace ampscope::profiler {

namespace sd = store_detail;
using store_detail::Db;
using store_detail::insert_sql;
using store_detail::quoted;
using store_detail::Stmt;

namespace {

// Additive to session format 1: plain sessions do not have these tables. Their
// columns are also listed in row_codec.h (comparison_table_layouts()), checked
// against this text by test_store_columns.
constexpr const char* kComparisonSchemaSql = R"sql(
CREATE TABLE comparison_variants(
  ord INTEGER PRIMARY KEY, variant TEXT NOT NULL UNIQUE, precision TEXT, tf32 INTEGER,
  scaler INTEGER, error TEXT NOT NULL DEFAULT '', profiled_steps INTEGER NOT NULL DEFAULT 0);
CREATE TABLE comparison_steps(
  variant TEXT NOT NULL, repeat INTEGER NOT NULL,
  step INTEGER NOT NULL, loss REAL, lr REAL, loss_scale REAL, found_inf INTEGER,
  skipped INTEGER, growth_tracker INTEGER, grad_norm REAL, step_time_ms REAL,
  samples_per_second REAL, mem_allocated_bytes INTEGER, mem_reserved_bytes INTEGER,
  mem_peak_bytes INTEGER, end_ns INTEGER, eval_loss REAL, capture_after_ms REAL,
  PRIMARY KEY(variant, repeat, step)) WITHOUT ROWID;
CREATE TABLE comparison_op_stats(
  id INTEGER PRIMARY KEY, variant TEXT NOT NULL, name TEXT, module TEXT, phase TEXT,
  category TEXT, input_dtypes TEXT, input_shapes TEXT, output_dtypes TEXT, calls INTEGER,
  cpu_time_ns INTEGER, gpu_time_ns INTEGER, kernels INTEGER, tensor_core_kernels INTEGER,
  tensor_core_gpu_time_ns INTEGER, cast_calls INTEGER, cast_bytes INTEGER,
  cast_cpu_time_ns INTEGER, cast_gpu_time_ns INTEGER, tensor_core_eligible INTEGER,
  tensor_core_note TEXT, top_level INTEGER, step_cpu_ns TEXT, step_gpu_ns TEXT);
CREATE INDEX comparison_op_stats_by_variant ON comparison_op_stats(variant);
)sql";


constexpr const char* kKindKey = meta_key::kKind;
constexpr const char* kKindComparison = "comparison";
constexpr const char* kModeKey = "mode";
constexpr const char* kModeTraining = "training";
constexpr const char* kModeInference = "inference";

// One transaction per call: a reader sees a repeat whole or not at all.
template <typename F>
void in_transaction(const Db& db, const char* what, F&& body) {
  db.exec("BEGIN IMMEDIATE", what);
  try {
    body();
  } catch (...) {
    sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  db.exec("COMMIT", what);
}

int64_t to_int(const std::map<std::string, std::string>& kv, const char* key) {
  auto it = kv.find(key);
  if (it == kv.end()) return 0;
  try {
    return std::stoll(it->second);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

std::unique_ptr<ComparisonWriter> ComparisonWriter::create(const std::string& path, const Comparison& comparison,
                                                           bool overwrite) {
  // The session writer makes the header and the (empty) session tables, so every
  // reader that opens sessions opens this file too.
  const int live_lock = SessionWriter::create(path, comparison.meta, overwrite)->close_keeping_live_lock();
  std::unique_ptr<ComparisonWriter> writer;
  try {
    Db db(path, SQLITE_OPEN_READWRITE);
    sqlite3_busy_timeout(db.get(), 2000);
    writer.reset(new ComparisonWriter(path, live_lock, std::move(db)));
  } catch (...) {
    if (live_lock >= 0) ::close(live_lock);
    throw;
  }
  in_transaction(writer->db_, "creating the comparison tables", [&] {
    writer->db_.exec(kComparisonSchemaSql, "creating the comparison tables");
    Stmt put(writer->db_, insert_sql("INSERT OR REPLACE", "meta", sd::kMetaColumns).c_str(), "storing meta");
    const std::string warmup = std::to_string(comparison.warmup_steps);
    const std::string repeats = std::to_string(comparison.planned_repeats);
    const std::string batch = std::to_string(comparison.effective_batch);
    // kModeKey is absent in files from before inference comparisons: they read as training.
    for (const auto& [key, value] : {std::pair<std::string_view, std::string_view>{kKindKey, kKindComparison},
                                     {"warmup_steps", warmup},
                                     {"planned_repeats", repeats},
                                     {"effective_batch", batch},
                                     {kModeKey, comparison.inference ? kModeInference : kModeTraining}}) {
      sd::bind_meta(put, 1, key, value);
      put.run();
    }
  });
  return writer;
}

ComparisonWriter::ComparisonWriter(std::string path, int live_lock_fd, Db db)
    : path_(std::move(path)), live_lock_{live_lock_fd}, db_(std::move(db)) {}

ComparisonWriter::LiveLock::~LiveLock() {
  if (fd >= 0) ::close(fd);
}
ComparisonWriter::~ComparisonWriter() = default;

void ComparisonWriter::add_variant(const VariantRun& v) {
  in_transaction(db_, "storing a comparison variant", [&] {
    Stmt s(db_, insert_sql("INSERT", "comparison_variants", sd::kComparisonVariantDescriptionColumns).c_str(),
           "storing a comparison variant");
    sd::bind_comparison_variant(s, 1, v);
    s.run();
  });
}

void ComparisonWriter::add_repeat(const std::string& variant, int64_t repeat, const std::vector<StepRecord>& steps) {
  in_transaction(db_, "storing a comparison run", [&] {
    Stmt s(db_, insert_sql("INSERT OR REPLACE", "comparison_steps", sd::kComparisonStepColumns).c_str(),
           "storing a comparison run");
    for (const auto& step : steps) {
      sd::bind_comparison_step(s, 1, variant, repeat, step);
      s.run();
    }
  });
}

void ComparisonWriter::set_profile(const std::string& variant, const std::vector<OpStats>& op_stats,
                                   int64_t profiled_steps) {
  in_transaction(db_, "storing a comparison op table", [&] {
    Stmt clear(db_, "DELETE FROM comparison_op_stats WHERE variant=?1", "storing a comparison op table");
    clear.bind_text(1, variant).run();
    Stmt s(db_, insert_sql("INSERT", "comparison_op_stats", sd::kComparisonOpStatsColumns).c_str(),
           "storing a comparison op table");
    sd::EncodedOpStats encoded;
    for (const auto& row : op_stats) {
      sd::bind_comparison_op_stats(s, 1, variant, row, encoded);
      s.run();
    }
    Stmt steps(db_, "UPDATE comparison_variants SET profiled_steps=?2 WHERE variant=?1",
               "storing a comparison op table");
    steps.bind_text(1, variant).bind(2, profiled_steps).run();
  });
}

void ComparisonWriter::set_error(const std::string& variant, const std::string& error) {
  in_transaction(db_, "storing a comparison error", [&] {
    Stmt s(db_, "UPDATE comparison_variants SET error=?2 WHERE variant=?1", "storing a comparison error");
    s.bind_text(1, variant).bind_text(2, error).run();
  });
}

void ComparisonWriter::set_scaler(const std::string& variant, bool scaler) {
  in_transaction(db_, "storing a comparison variant", [&] {
    Stmt s(db_, "UPDATE comparison_variants SET scaler=?2 WHERE variant=?1", "storing a comparison variant");
    s.bind_text(1, variant).bind(2, int64_t{scaler ? 1 : 0}).run();
  });
}

void ComparisonWriter::set_meta(const std::string& key, const std::string& value) {
  Stmt s(db_, insert_sql("INSERT OR REPLACE", "meta", sd::kMetaColumns).c_str(), "storing meta");
  sd::bind_meta(s, 1, key, value);
  s.run();
}

bool is_comparison(const SessionReader& session) {
  return session.meta_value(kKindKey).value_or("") == kKindComparison;
}

bool is_comparison_file(const std::string& path) { return is_comparison(SessionReader::open(path)); }

Comparison read_comparison(const std::string& path) { return read_comparison(SessionReader::open(path)); }

Comparison read_comparison(const SessionReader& session) {
  const auto kv = session.meta_values();
  if (auto it = kv.find(kKindKey); it == kv.end() || it->second != kKindComparison)
    throw StoreError(quoted(session.path()) + " is a profiling session, not a comparison");

  Comparison c;
  c.meta = session.meta();
  c.warmup_steps = to_int(kv, "warmup_steps");
  c.planned_repeats = to_int(kv, "planned_repeats");
  c.effective_batch = to_int(kv, "effective_batch");
  if (auto it = kv.find(kModeKey); it != kv.end()) c.inference = it->second == kModeInference;

  const Db& db = session.database();
  {
    Stmt s(db,
           ("SELECT " + sd::column_list(sd::kComparisonVariantColumns) + " FROM comparison_variants ORDER BY ord")
               .c_str(),
           "reading the comparison");
    while (s.step()) c.variants.push_back(sd::read_comparison_variant(s, 0));
  }
  Stmt steps(db,
             ("SELECT " +
              sd::select_columns(db, "comparison_steps", sd::kComparisonStepColumns, sd::kStepAddedColumns) +
              " FROM comparison_steps WHERE variant=?1 ORDER BY repeat, step")
                 .c_str(),
             "reading the comparison");
  Stmt ops(db,
           ("SELECT " +
            sd::select_columns(db, "comparison_op_stats", sd::kComparisonOpStatsColumns,
                               sd::kComparisonOpStatsAddedColumns) +
            " FROM comparison_op_stats WHERE variant=?1 ORDER BY id")
               .c_str(),
           "reading the comparison");
  for (auto& v : c.variants) {
    steps.bind_text(1, v.variant);
    int64_t current_repeat = -1;
    while (steps.step()) {
      sd::ComparisonStepRow row = sd::read_comparison_step(steps, 0);
      if (row.repeat != current_repeat) {
        v.repeats.emplace_back();
        current_repeat = row.repeat;
      }
      v.repeats.back().push_back(row.step);
    }
    steps.reset();
    ops.bind_text(1, v.variant);
    while (ops.step()) v.op_stats.push_back(sd::read_comparison_op_stats(ops, 0));
    ops.reset();
  }
  std::vector<std::string> names;
  for (const auto& v : c.variants) names.push_back(v.variant);
  c.script = compared_script_facts(kv, names);
  return c;
}

}  // namespace ampscope::profiler
