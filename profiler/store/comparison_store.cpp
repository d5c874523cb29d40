#include "profiler/store/comparison_store.h"

#include <unistd.h>

#include <algorithm>
#include <map>

#include "profiler/store/row_codec.h"
#include "profiler/session_meta_keys.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_writer.h"

namespace ampscope::profiler {

using store_detail::Db;
using store_detail::quoted;
using store_detail::Stmt;
using store_detail::has_column;

namespace {

// Additive to session format 1: plain sessions do not have these tables.
constexpr const char* kComparisonSchemaSql = R"sql(
CREATE TABLE comparison_variants(
  ord INTEGER PRIMARY KEY, variant TEXT NOT NULL UNIQUE, precision TEXT, tf32 INTEGER,
  scaler INTEGER, error TEXT NOT NULL DEFAULT '', profiled_steps INTEGER NOT NULL DEFAULT 0);
CREATE TABLE comparison_steps(
  variant TEXT NOT NULL, repeat INTEGER NOT NULL,
  step INTEGER NOT NULL, loss REAL, lr REAL, loss_scale REAL, found_inf INTEGER,
  skipped INTEGER, growth_tracker INTEGER, grad_norm REAL, step_time_ms REAL,
  samples_per_second REAL, mem_allocated_bytes INTEGER, mem_reserved_bytes INTEGER,
  mem_peak_bytes INTEGER, end_ns INTEGER, eval_loss REAL, PRIMARY KEY(variant, repeat, step)) WITHOUT ROWID;
CREATE TABLE comparison_op_stats(
  id INTEGER PRIMARY KEY, variant TEXT NOT NULL, name TEXT, module TEXT, phase TEXT,
  category TEXT, input_dtypes TEXT, input_shapes TEXT, output_dtypes TEXT, calls INTEGER,
  cpu_time_ns INTEGER, gpu_time_ns INTEGER, kernels INTEGER, tensor_core_kernels INTEGER,
  tensor_core_gpu_time_ns INTEGER, cast_calls INTEGER, cast_bytes INTEGER,
  cast_cpu_time_ns INTEGER, cast_gpu_time_ns INTEGER, tensor_core_eligible INTEGER,
  tensor_core_note TEXT, top_level INTEGER, step_cpu_ns TEXT, step_gpu_ns TEXT);
CREATE INDEX comparison_op_stats_by_variant ON comparison_op_stats(variant);
)sql";

// Per-step times as "12,0,15": readable in the sqlite3 shell, and short (a profiled pass has few steps).
std::string encode_samples(const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out.push_back(',');
    out += std::to_string(values[i]);
  }
  return out;
}

std::vector<int64_t> decode_samples(const std::string& text) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    try {
      out.push_back(std::stoll(text.substr(start, comma - start)));
    } catch (const std::exception&) {
      return {};  // damaged: the reader falls back to the totals
    }
    start = comma + 1;
  }
  return out;
}


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
    Stmt put(writer->db_, "INSERT OR REPLACE INTO meta VALUES(?1,?2)", "storing meta");
    const std::string warmup = std::to_string(comparison.warmup_steps);
    const std::string repeats = std::to_string(comparison.planned_repeats);
    const std::string batch = std::to_string(comparison.effective_batch);
    put.bind_text(1, kKindKey).bind_text(2, kKindComparison).run();
    put.bind_text(1, "warmup_steps").bind_text(2, warmup).run();
    put.bind_text(1, "planned_repeats").bind_text(2, repeats).run();
    put.bind_text(1, "effective_batch").bind_text(2, batch).run();
    // Absent in files from before inference comparisons: they read as training.
    put.bind_text(1, kModeKey).bind_text(2, comparison.inference ? kModeInference : kModeTraining).run();
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
    Stmt s(db_, "INSERT INTO comparison_variants(variant,precision,tf32,scaler,error) VALUES(?1,?2,?3,?4,?5)",
           "storing a comparison variant");
    s.bind_text(1, v.variant).bind_text(2, v.precision).bind(3, v.tf32).bind(4, v.scaler).bind_text(5, v.error);
    s.run();
  });
}

void ComparisonWriter::add_repeat(const std::string& variant, int64_t repeat, const std::vector<StepRecord>& steps) {
  in_transaction(db_, "storing a comparison run", [&] {
    Stmt s(db_,
           (std::string("INSERT OR REPLACE INTO comparison_steps(variant,repeat,") + store_detail::kStepColumns +
            ") VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17)")
               .c_str(),
           "storing a comparison run");
    for (const auto& step : steps) {
      s.bind_text(1, variant).bind(2, repeat);
      store_detail::bind_step(s, 3, step);
      s.run();
    }
  });
}

void ComparisonWriter::set_profile(const std::string& variant, const std::vector<OpStats>& op_stats,
                                   int64_t profiled_steps) {
  in_transaction(db_, "storing a comparison op table", [&] {
    Stmt clear(db_, "DELETE FROM comparison_op_stats WHERE variant=?1", "storing a comparison op table");
    clear.bind_text(1, variant).run();
    Stmt s(db_,
           (std::string("INSERT INTO comparison_op_stats(variant,") + store_detail::kOpStatsColumns +
            ",step_cpu_ns,step_gpu_ns) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,"
            "?20,?21,?22,?23)")
               .c_str(),
           "storing a comparison op table");
    static_assert(store_detail::kOpStatsColumnCount == 20, "the per-step columns follow the op_stats columns");
    store_detail::EncodedOpStats encoded;
    for (const auto& row : op_stats) {
      s.bind_text(1, variant);
      store_detail::bind_op_stats(s, 2, row, encoded);
      const std::string cpu = encode_samples(row.step_cpu_time_ns), gpu = encode_samples(row.step_gpu_time_ns);
      s.bind_text(22, cpu).bind_text(23, gpu);
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

void ComparisonWriter::set_meta(const std::string& key, const std::string& value) {
  Stmt s(db_, "INSERT OR REPLACE INTO meta VALUES(?1,?2)", "storing meta");
  s.bind_text(1, key).bind_text(2, value).run();
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
    Stmt s(db, "SELECT variant,precision,tf32,scaler,error,profiled_steps FROM comparison_variants ORDER BY ord",
           "reading the comparison");
    while (s.step()) {
      VariantRun v;
      v.variant = s.text(0);
      v.precision = s.text(1);
      v.tf32 = s.boolean(2);
      v.scaler = s.boolean(3);
      v.error = s.text(4);
      v.profiled_steps = s.i64(5);
      c.variants.push_back(std::move(v));
    }
  }
  Stmt steps(db,
             ("SELECT repeat," + store_detail::step_select_columns(db, "comparison_steps") +
              " FROM comparison_steps WHERE variant=?1 ORDER BY repeat, step")
                 .c_str(),
             "reading the comparison");
  // Comparison files from before the per-step columns lack them; they read as no samples.
  const bool per_step = has_column(db, "comparison_op_stats", "step_cpu_ns");
  Stmt ops(db,
           (std::string("SELECT ") + store_detail::kOpStatsColumns + (per_step ? ",step_cpu_ns,step_gpu_ns" : "") +
            " FROM comparison_op_stats WHERE variant=?1 ORDER BY id")
               .c_str(),
           "reading the comparison");
  for (auto& v : c.variants) {
    steps.bind_text(1, v.variant);
    int64_t current_repeat = -1;
    while (steps.step()) {
      const int64_t repeat = steps.i64(0);
      if (repeat != current_repeat) {
        v.repeats.emplace_back();
        current_repeat = repeat;
      }
      v.repeats.back().push_back(store_detail::read_step(steps, 1));
    }
    steps.reset();
    ops.bind_text(1, v.variant);
    while (ops.step()) {
      v.op_stats.push_back(store_detail::read_op_stats(ops, 0));
      if (per_step) {
        v.op_stats.back().step_cpu_time_ns = decode_samples(ops.text(store_detail::kOpStatsColumnCount));
        v.op_stats.back().step_gpu_time_ns = decode_samples(ops.text(store_detail::kOpStatsColumnCount + 1));
      }
    }
    ops.reset();
  }
  return c;
}

}  // namespace ampscope::profiler
