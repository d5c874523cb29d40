#include "profiler/store/session_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <system_error>

#include "profiler/analysis/warmup_step.h"
#include "profiler/session_meta_keys.h"
#include "profiler/store/row_codec.h"
#include "profiler/store/session_schema.h"

namespace ampscope::profiler {

namespace sd = store_detail;
using store_detail::column_list;
using store_detail::Db;
using store_detail::quoted;
using store_detail::Stmt;

namespace {

// Files from before an additive table lack it.
bool has_table(const Db& db, const char* name) {
  Stmt s(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1", "reading the schema");
  s.bind_text(1, name);
  return s.step();
}

// The activation rows, for a WHERE or ORDER BY clause to follow.
std::string activation_select() { return "SELECT " + column_list(sd::kActivationColumns) + " FROM activations "; }

// The kernel rows with their names, for a WHERE clause to follow.
std::string kernel_select() {
  return "SELECT " + sd::kernel_select_columns() + " FROM " + sd::kKernelsWithNames + " ";
}

int64_t saturating_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_sub_overflow(a, b, &r) ? std::numeric_limits<int64_t>::min() : r;
}

int64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

std::string not_a_session(const std::string& path, const std::string& why) {
  return quoted(path) + " is not an ampscope session file" + (why.empty() ? "" : " (" + why + ")");
}

// Checks that need no SQLite: missing, a directory, empty, or not SQLite at all.
void check_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw StoreError("cannot open session " + quoted(path) + ": " + std::generic_category().message(errno));
  if (S_ISDIR(st.st_mode))
    throw StoreError("cannot open session " + quoted(path) + ": it is a directory");
  if (st.st_size == 0) throw StoreError(not_a_session(path, "empty file"));
  std::array<unsigned char, 100> header{};
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw StoreError("cannot open session " + quoted(path) + ": " + std::generic_category().message(errno));
  const size_t n = std::fread(header.data(), 1, header.size(), f);
  std::fclose(f);
  if (n < 16 || std::memcmp(header.data(), "SQLite format 3", 16) != 0)
    throw StoreError(not_a_session(path, "not an SQLite database"));
  if (n < header.size())
    throw StoreError(quoted(path) + " is truncated (" + std::to_string(st.st_size) + " bytes)");
  // Without a WAL the file alone must hold every page its header counts (the count
  // is valid when the change counter at 24 matches the one at 92); a shorter file
  // was cut (interrupted copy, full disk). With a WAL, newer pages may live there.
  auto be32 = [&](size_t at) {
    return (uint32_t{header[at]} << 24) | (uint32_t{header[at + 1]} << 16) |
           (uint32_t{header[at + 2]} << 8) | uint32_t{header[at + 3]};
  };
  const uint32_t raw_page = (uint32_t{header[16]} << 8) | header[17];
  const int64_t page_size = raw_page == 1 ? 65536 : raw_page;
  if (file_size(path + "-wal") <= 0 && be32(24) == be32(92)) {
    const int64_t expected = page_size * be32(28);
    if (st.st_size < expected)
      throw StoreError(quoted(path) + " is truncated (" + std::to_string(st.st_size) + " of " +
                       std::to_string(expected) + " bytes)");
  }
}

}  // namespace

struct SessionReader::Impl {
  Db db;
  int64_t scalar(const char* sql, std::string_view what) const {
    Stmt s(db, sql, what);
    return s.step() ? s.i64(0) : 0;
  }
};

SessionReader::SessionReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SessionReader::SessionReader(SessionReader&&) noexcept = default;
SessionReader& SessionReader::operator=(SessionReader&&) noexcept = default;
SessionReader::~SessionReader() = default;

SessionReader SessionReader::open(const std::string& path) {
  check_file(path);
  auto impl = std::make_unique<Impl>();
  impl->db = Db(path, SQLITE_OPEN_READONLY);
  sqlite3_busy_timeout(impl->db.get(), 2000);
  // The magic matched, so a failure here is a damaged SQLite file, reported as corrupt.
  const int64_t app_id = impl->scalar("PRAGMA application_id", "reading the header");
  const int64_t version = impl->scalar("PRAGMA user_version", "reading the header");
  if (app_id != kSessionApplicationId) throw StoreError(not_a_session(path, ""));
  if (version > kSessionFormatVersion)
    throw StoreError(quoted(path) + " was written by a newer ampscope (session format " +
                     std::to_string(version) + "; this build reads up to " +
                     std::to_string(kSessionFormatVersion) + ")");
  if (version < 1)
    throw StoreError(quoted(path) + " has an unknown session format (" + std::to_string(version) +
                     ")");
  // ops is a table in format 1 and a view of op_signatures and op_calls since format 2.
  const int64_t tables = impl->scalar(
      "SELECT count(*) FROM sqlite_master WHERE type IN ('table','view') AND name IN ('meta','steps','ops',"
      "'kernel_names','kernels','kernel_stats','kernel_ops','gradients','op_stats')",
      "reading the schema");
  if (tables != 9) throw StoreError(quoted(path) + " is corrupt: session tables are missing");
  SessionReader reader(std::move(impl));
  reader.format_version_ = static_cast<int>(version);
  reader.meta_values();  // touches the data pages: fails here, not in the caller's first query
  return reader;
}

const std::string& SessionReader::path() const { return impl_->db.path(); }

const store_detail::Db& SessionReader::database() const { return impl_->db; }

std::map<std::string, std::string> SessionReader::meta_values() const {
  std::map<std::string, std::string> out;
  Stmt s(impl_->db, ("SELECT " + column_list(sd::kMetaColumns) + " FROM meta").c_str(), "reading meta");
  while (s.step()) {
    auto [key, value] = sd::read_meta(s, 0);
    out.insert_or_assign(std::move(key), std::move(value));
  }
  return out;
}

std::optional<std::string> SessionReader::meta_value(const std::string& key) const {
  Stmt s(impl_->db, "SELECT value FROM meta WHERE key=?1", "reading meta");
  s.bind_text(1, key);
  if (!s.step()) return std::nullopt;
  return s.text(0);
}

SessionMeta SessionReader::meta() const {
  auto kv = meta_values();
  auto get = [&](const char* key) {
    auto it = kv.find(key);
    return it == kv.end() ? std::string() : it->second;
  };
  SessionMeta m;
  m.ampscope_version = get(meta_key::kAmpscopeVersion);
  m.created_utc = get(meta_key::kCreatedUtc);
  m.config_json = get(meta_key::kConfigJson);
  m.device = get(meta_key::kDevice);
  m.device_name = get(meta_key::kDeviceName);
  m.model = get(meta_key::kModel);
  m.data = get(meta_key::kData);
  m.precision = get(meta_key::kPrecision);
  m.parameter_count = std::strtoll(get(meta_key::kParameterCount).c_str(), nullptr, 10);
  m.scaler_enabled = get(meta_key::kScalerEnabled) == "true";
  m.torch_version = get(meta_key::kTorchVersion);
  m.gpu_tracing = get(meta_key::kGpuTracing);
  m.cpu_isa = get(meta_key::kCpuIsa);
  m.cpu_bf16_matmul = get(meta_key::kCpuBf16Matmul);
  m.cpu_fp16_matmul = get(meta_key::kCpuFp16Matmul);
  return m;
}

std::vector<StepRecord> SessionReader::steps() const {
  std::vector<StepRecord> out;
  Stmt s(impl_->db,
         ("SELECT " + sd::select_columns(impl_->db, "steps", sd::kStepColumns, sd::kStepAddedColumns) +
          " FROM steps ORDER BY step")
             .c_str(),
         "reading steps");
  while (s.step()) out.push_back(sd::read_step(s, 0));
  return out;
}

std::vector<OpStats> SessionReader::op_stats() const {
  std::vector<OpStats> out;
  Stmt s(impl_->db,
         ("SELECT " +
          sd::select_columns(impl_->db, "op_stats", sd::kSessionOpStatsColumns, sd::kSessionOpStatsAddedColumns) +
          " FROM op_stats ORDER BY id")
             .c_str(),
         "reading the op table");
  while (s.step()) out.push_back(sd::read_session_op_stats(s, 0));
  return out;
}

void SessionReader::for_each_op(int64_t first_step, int64_t last_step,
                                const std::function<void(const OpRecord&)>& fn) const {
  if (format_version_ < 2) {
    const std::string sql =
        "SELECT " + column_list(sd::kOpColumns) + " FROM ops WHERE step BETWEEN ?1 AND ?2 ORDER BY start_ns, id";
    Stmt s(impl_->db, sql.c_str(), "reading ops");
    s.bind(1, first_step).bind(2, last_step);
    while (s.step()) fn(sd::read_op(s, 0));
    return;
  }
  // Format 2: the calls, each signature decoded once (its dtype and shape text was
  // most of the reading); `op` is reused, so its strings and vectors keep their
  // capacity. A call whose signature is missing (a damaged file) is left out, as
  // the view `ops` leaves it out.
  Stmt calls(impl_->db,
             ("SELECT " + column_list(sd::kOpCallColumns) +
              " FROM op_calls WHERE step BETWEEN ?1 AND ?2 ORDER BY start_ns, id")
                 .c_str(),
             "reading ops");
  Stmt find_signature(
      impl_->db, ("SELECT " + column_list(sd::kOpSignatureColumns) + " FROM op_signatures WHERE id=?1").c_str(),
      "reading ops");
  std::unordered_map<int64_t, std::optional<OpRecord>> signatures;
  calls.bind(1, first_step).bind(2, last_step);
  OpRecord op;
  while (calls.step()) {
    const int64_t signature_id = sd::read_op_call(calls, 0, op);
    auto it = signatures.find(signature_id);
    if (it == signatures.end()) {
      std::optional<OpRecord> found;
      if (find_signature.bind(1, signature_id).step()) found = sd::read_op_signature(find_signature, 0);
      find_signature.reset();
      it = signatures.emplace(signature_id, std::move(found)).first;
    }
    if (!it->second) continue;
    const OpRecord& signature = *it->second;
    op.name = signature.name;
    op.phase = signature.phase;
    op.category = signature.category;
    op.module = signature.module;
    op.input_dtypes = signature.input_dtypes;
    op.input_shapes = signature.input_shapes;
    op.output_dtypes = signature.output_dtypes;
    fn(op);
  }
}

std::vector<OpRecord> SessionReader::ops(int64_t first_step, int64_t last_step) const {
  std::vector<OpRecord> out;
  for_each_op(first_step, last_step, [&](const OpRecord& op) { out.push_back(op); });
  return out;
}

// Counting ops and listing their steps need no signature: since format 2 they read
// op_calls alone (count(*) through the view joins every row, 5x slower).
const char* SessionReader::op_calls_table() const { return format_version_ >= 2 ? "op_calls" : "ops"; }

int64_t SessionReader::op_count() const {
  return impl_->scalar((std::string("SELECT count(*) FROM ") + op_calls_table()).c_str(), "reading ops");
}

std::vector<int64_t> SessionReader::op_steps() const {
  Stmt s(impl_->db,
         (std::string("SELECT step FROM ") + op_calls_table() + " WHERE step > ?1 ORDER BY step LIMIT 1").c_str(),
         "reading ops");
  std::vector<int64_t> out;
  int64_t after = std::numeric_limits<int64_t>::min();
  while (s.bind(1, after).step()) {
    after = s.i64(0);
    out.push_back(after);
    s.reset();
  }
  return out;
}

void SessionReader::for_each_kernel(int64_t start_ns, int64_t end_ns,
                                    const std::function<void(const KernelRecord&)>& fn) const {
  // start_ns is indexed, end_ns is not: a kernel overlapping the window started at
  // most the longest kernel's duration before it (longest_kernel_ns).
  const int64_t longest = longest_kernel_ns();
  const std::string sql = kernel_select() +
                          "WHERE k.start_ns >= ?1 AND k.start_ns < ?2 AND k.end_ns > ?3 "
                          "ORDER BY k.start_ns, k.id";
  Stmt s(impl_->db, sql.c_str(), "reading kernels");
  s.bind(1, saturating_sub(start_ns, longest + 1)).bind(2, end_ns).bind(3, start_ns);
  while (s.step()) fn(sd::read_kernel(s, 0));
}

std::vector<KernelRecord> SessionReader::kernels(int64_t start_ns, int64_t end_ns,
                                                 size_t limit) const {
  const int64_t longest = longest_kernel_ns();
  const std::string sql = kernel_select() +
                          "WHERE k.start_ns >= ?1 AND k.start_ns < ?2 AND k.end_ns > ?3 "
                          "ORDER BY k.start_ns, k.id LIMIT ?4";
  Stmt s(impl_->db, sql.c_str(), "reading kernels");
  s.bind(1, saturating_sub(start_ns, longest + 1)).bind(2, end_ns).bind(3, start_ns);
  s.bind(4, limit > static_cast<size_t>(INT64_MAX) ? int64_t{-1} : static_cast<int64_t>(limit));
  std::vector<KernelRecord> out;
  while (s.step()) out.push_back(sd::read_kernel(s, 0));
  return out;
}

std::vector<KernelRecord> SessionReader::kernels_in_steps(int64_t first_step,
                                                          int64_t last_step) const {
  const std::string sql = kernel_select() +
                          "WHERE k.step BETWEEN ?1 AND ?2 ORDER BY k.start_ns, k.id";
  Stmt s(impl_->db, sql.c_str(), "reading kernels");
  s.bind(1, first_step).bind(2, last_step);
  std::vector<KernelRecord> out;
  while (s.step()) out.push_back(sd::read_kernel(s, 0));
  return out;
}

int64_t SessionReader::kernel_count() const {
  // Kernel rows are only ever appended, so the largest rowid is their count, read from
  // the b-tree's edge: the raw rows, not the kernel table (saved every 2 s, so it lags
  // in a live or killed session), without scanning millions of rows.
  return impl_->scalar("SELECT coalesce(max(rowid),0) FROM kernels", "reading kernels");
}

std::vector<KernelRecord> SessionReader::kernels_for_op(uint64_t op_id) const {
  const std::string sql =
      kernel_select() + "WHERE k.op_id = ?1 ORDER BY k.start_ns, k.id";
  Stmt s(impl_->db, sql.c_str(), "reading kernels");
  s.bind(1, op_id);
  std::vector<KernelRecord> out;
  while (s.step()) out.push_back(sd::read_kernel(s, 0));
  return out;
}

std::vector<KernelSummary> SessionReader::top_kernels(size_t n) const {
  std::vector<KernelSummary> out;
  std::vector<int64_t> ids;
  Stmt s(impl_->db,
         ("SELECT n.name," + column_list(sd::kKernelStatColumns, "s") +
          " FROM kernel_stats s JOIN kernel_names n ON n.id = s.name_id ORDER BY s.total_ns DESC, n.name LIMIT ?1")
             .c_str(),
         "reading kernel statistics");
  s.bind(1, static_cast<int64_t>(std::min<size_t>(n, INT64_MAX)));
  while (s.step()) {
    sd::KernelStatRow row = sd::read_kernel_stat(s, 1);
    row.summary.name = s.text(0);
    out.push_back(std::move(row.summary));
    ids.push_back(row.name_id);
  }
  Stmt o(impl_->db,
         "SELECT op_name FROM kernel_ops WHERE name_id=?1 ORDER BY calls DESC, op_name LIMIT 8",
         "reading kernel statistics");
  for (size_t i = 0; i < out.size(); ++i) {
    o.bind(1, ids[i]);
    while (o.step()) out[i].launching_ops.push_back(o.text(0));
    o.reset();
  }
  // Sessions from before kernel_enclosing_ops name only the launching ops.
  if (!has_table(impl_->db, "kernel_enclosing_ops")) return out;
  Stmt e(impl_->db,
         "SELECT op_name FROM kernel_enclosing_ops WHERE name_id=?1 ORDER BY calls DESC, op_name LIMIT 8",
         "reading kernel statistics");
  for (size_t i = 0; i < out.size(); ++i) {
    e.bind(1, ids[i]);
    while (e.step()) out[i].enclosing_ops.push_back(e.text(0));
    e.reset();
  }
  return out;
}

std::vector<GradientSample> SessionReader::gradients(int64_t step) const {
  const std::string sql = "SELECT " +
                          sd::select_columns(impl_->db, "gradients", sd::kGradientColumns, sd::kGradientAddedColumns) +
                          " FROM gradients WHERE step = ?1 ORDER BY parameter";
  Stmt s(impl_->db, sql.c_str(), "reading gradients");
  s.bind(1, step);
  std::vector<GradientSample> out;
  while (s.step()) out.push_back(sd::read_gradient(s, 0));
  return out;
}

std::vector<ActivationSample> SessionReader::activations(int64_t step) const {
  std::vector<ActivationSample> out;
  if (!has_table(impl_->db, "activations")) return out;  // recorded before activation ranges
  Stmt s(impl_->db, (activation_select() + "WHERE step = ?1 ORDER BY ord").c_str(), "reading activations");
  s.bind(1, step);
  while (s.step()) out.push_back(sd::read_activation(s, 0));
  return out;
}

std::vector<int64_t> SessionReader::activation_steps() const {
  std::vector<int64_t> out;
  if (!has_table(impl_->db, "activations")) return out;
  Stmt s(impl_->db, "SELECT DISTINCT step FROM activations ORDER BY step", "reading activations");
  while (s.step()) out.push_back(s.i64(0));
  return out;
}

std::optional<ActivationSample> SessionReader::first_fp16_overflow() const {
  if (!has_table(impl_->db, "activations")) return std::nullopt;
  Stmt s(impl_->db, (activation_select() + "ORDER BY step, ord").c_str(), "reading activations");
  while (s.step()) {
    ActivationSample a = sd::read_activation(s, 0);
    if (overflows_fp16(a)) return a;
  }
  return std::nullopt;
}

ReadinessTotals SessionReader::readiness() const {
  ReadinessTotals totals;
  if (!has_table(impl_->db, "readiness")) return totals;  // recorded before precision readiness
  Stmt s(impl_->db, ("SELECT " + column_list(sd::kReadinessColumns) + " FROM readiness ORDER BY rowid").c_str(),
         "reading precision readiness");
  while (s.step())
    if (const auto sample = sd::read_readiness(s, 0)) totals.add(*sample);
  return totals;
}

std::vector<int64_t> SessionReader::gradient_steps() const {
  Stmt s(impl_->db, "SELECT DISTINCT step FROM gradients ORDER BY step", "reading gradients");
  std::vector<int64_t> out;
  while (s.step()) out.push_back(s.i64(0));
  return out;
}

std::vector<SampledGradientNorm> SessionReader::sampled_gradient_norms() const {
  Stmt s(impl_->db, "SELECT step, norm, nonfinite_fraction FROM gradients ORDER BY step", "reading gradients");
  std::vector<SampledGradientNorm> out;
  GradientNormSum sum;
  const auto close = [&] {
    if (!out.empty()) out.back().norm = sum.total();
  };
  while (s.step()) {
    const int64_t step = s.i64(0);
    if (out.empty() || out.back().step != step) {
      close();
      out.push_back({step, 0.0});
      sum = GradientNormSum();
    }
    sum.add(s.is_null(1) ? std::nan("") : s.real(1), s.is_null(2) ? 0.0 : s.real(2));
  }
  close();
  return out;
}

std::vector<GradientSample> SessionReader::latest_gradients() const {
  Stmt s(impl_->db, "SELECT max(step) FROM gradients", "reading gradients");
  if (!s.step() || s.is_null(0)) return {};
  return gradients(s.i64(0));
}

std::vector<OptimizerStepRecord> SessionReader::optimizer_steps() const {
  std::vector<OptimizerStepRecord> out;
  if (!has_table(impl_->db, "optimizer_steps")) return out;
  Stmt s(impl_->db,
         ("SELECT " + column_list(sd::kOptimizerStepColumns) + " FROM optimizer_steps ORDER BY step, optimizer")
             .c_str(),
         "reading optimizer steps");
  while (s.step()) out.push_back(sd::read_optimizer_step(s, 0));
  return out;
}

std::vector<SchedulerStepRecord> SessionReader::scheduler_steps() const {
  std::vector<SchedulerStepRecord> out;
  if (!has_table(impl_->db, "scheduler_steps")) return out;  // written before issue #30
  Stmt s(impl_->db,
         ("SELECT " + column_list(sd::kSchedulerStepColumns) + " FROM scheduler_steps ORDER BY call").c_str(),
         "reading scheduler steps");
  while (s.step()) out.push_back(sd::read_scheduler_step(s, 0));
  return out;
}

std::vector<BackwardCheck> SessionReader::backward_checks() const {
  std::vector<BackwardCheck> out;
  if (!has_table(impl_->db, "backward_checks")) return out;
  Stmt s(impl_->db,
         ("SELECT " + sd::select_columns(impl_->db, "backward_checks", sd::kBackwardCheckColumns,
                                          sd::kBackwardCheckAddedColumns) +
          " FROM backward_checks ORDER BY step")
             .c_str(),
         "reading backward checks");
  while (s.step()) out.push_back(sd::read_backward_check(s, 0));
  return out;
}

std::vector<CompiledKernelRow> SessionReader::compiled_kernels() const {
  std::vector<CompiledKernelRow> out;
  if (!has_table(impl_->db, "compiled_kernels")) return out;  // written before issue #28
  Stmt s(impl_->db,
         ("SELECT " +
          sd::select_columns(impl_->db, "compiled_kernels", sd::kCompiledKernelColumns, sd::kCompiledKernelAddedColumns) +
          " FROM compiled_kernels ORDER BY rowid")
             .c_str(),
         "reading compiled kernels");
  while (s.step()) out.push_back(sd::read_compiled_kernel(s, 0));
  return out;
}

std::vector<CategoryTotals> SessionReader::category_totals() const {
  return profiler::category_totals(op_stats(), compiled_compute_time(compiled_kernels()));
}

namespace {

// What the kernel table left out of the warm-up step; nullopt where it kept the step. One
// meta row: the time-window queries ask for it each time.
std::optional<WarmupLeftOut> kernels_left_out(const SessionReader& reader) {
  const auto value = reader.meta_value(meta_key::kWarmupLeftOut);
  auto warmup = value ? warmup_left_out_from_meta_value(*value) : std::nullopt;
  return warmup && warmup->kernels_left_out ? warmup : std::nullopt;
}

}  // namespace

GpuAttribution SessionReader::gpu_attribution() const {
  // Over the kernel table's steps: without the warm-up step where the table left it out.
  GpuAttribution a;
  a.unattributed_ns = unattributed_gpu_ns();
  if (const auto warmup = kernels_left_out(*this)) a.unattributed_ns -= warmup->unattributed_gpu_ns;
  a.traced_ns = impl_->scalar("SELECT coalesce(sum(total_ns),0) FROM kernel_stats", "summing kernels");
  return a;
}

int64_t SessionReader::longest_kernel_ns() const {
  // kernel_stats knows every kernel's duration but the warm-up step's, where it left them out.
  int64_t longest = impl_->scalar("SELECT coalesce(max(max_ns),0) FROM kernel_stats", "reading kernels");
  if (const auto warmup = kernels_left_out(*this)) longest = std::max(longest, warmup->longest_kernel_ns);
  return longest;
}

int64_t SessionReader::unattributed_gpu_ns() const {
  return impl_->scalar("SELECT coalesce(sum(end_ns - start_ns),0) FROM kernels WHERE op_id = 0",
                       "summing kernels");
}

}  // namespace ampscope::profiler
