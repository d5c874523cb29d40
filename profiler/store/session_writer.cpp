#include "profiler/store/session_writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "profiler/process_identity.h"
#include "profiler/recording_health.h"
#include "profiler/store/row_codec.h"
#include "profiler/store/session_schema.h"
#include "profiler/thread_priority.h"

namespace ampscope::profiler {

namespace sd = store_detail;
using store_detail::Db;
using store_detail::insert_sql;
using store_detail::quoted;
using store_detail::Stmt;

namespace {

constexpr auto kBusyGiveUp = std::chrono::seconds(30);

std::vector<std::pair<std::string, std::string>> meta_pairs(const SessionMeta& m) {
  return {{meta_key::kAmpscopeVersion, m.ampscope_version},
          {meta_key::kCreatedUtc, m.created_utc},
          {meta_key::kConfigJson, m.config_json},
          {meta_key::kDevice, m.device},
          {meta_key::kDeviceName, m.device_name},
          {meta_key::kModel, m.model},
          {meta_key::kData, m.data},
          {meta_key::kPrecision, m.precision},
          {meta_key::kParameterCount, std::to_string(m.parameter_count)},
          {meta_key::kScalerEnabled, m.scaler_enabled ? "true" : "false"},
          {meta_key::kTorchVersion, m.torch_version},
          {meta_key::kGpuTracing, m.gpu_tracing},
          {meta_key::kCpuIsa, m.cpu_isa},
          {meta_key::kCpuBf16Matmul, m.cpu_bf16_matmul},
          {meta_key::kCpuFp16Matmul, m.cpu_fp16_matmul}};
}

}  // namespace

struct SessionWriter::Statements {
  explicit Statements(const Db& db)
      : step(db, insert_sql("INSERT OR REPLACE", "steps", sd::kStepColumns).c_str(), "storing a step"),
        op_signature(db, insert_sql("INSERT", "op_signatures", sd::kOpSignatureColumns).c_str(), "storing ops"),
        op_call(db, insert_sql("INSERT OR REPLACE", "op_calls", sd::kOpCallColumns).c_str(), "storing ops"),
        op_calls(db,
                 sd::insert_rows_sql("INSERT OR REPLACE", "op_calls", sd::kOpCallColumns, kOpCallsPerInsert).c_str(),
                 "storing ops"),
        kernel(db, insert_sql("INSERT", "kernels", sd::kKernelColumns).c_str(), "storing kernels"),
        find_name(db, "SELECT id FROM kernel_names WHERE name=?1", "storing kernels"),
        add_name(db, insert_sql("INSERT", "kernel_names", sd::kKernelNameColumns).c_str(), "storing kernels"),
        clear_kernel_stats(db, "DELETE FROM kernel_stats", "storing kernel statistics"),
        clear_kernel_ops(db, "DELETE FROM kernel_ops", "storing kernel statistics"),
        clear_kernel_enclosing_ops(db, "DELETE FROM kernel_enclosing_ops", "storing kernel statistics"),
        kernel_stat(db, insert_sql("INSERT", "kernel_stats", sd::kKernelStatColumns).c_str(),
                    "storing kernel statistics"),
        kernel_op(db, insert_sql("INSERT", "kernel_ops", sd::kKernelOpColumns).c_str(), "storing kernel statistics"),
        kernel_enclosing_op(db, insert_sql("INSERT", "kernel_enclosing_ops", sd::kKernelOpColumns).c_str(),
                            "storing kernel statistics"),
        gradient(db, insert_sql("INSERT OR REPLACE", "gradients", sd::kGradientColumns).c_str(), "storing gradients"),
        activation(db, insert_sql("INSERT OR REPLACE", "activations", sd::kActivationColumns).c_str(),
                   "storing activations"),
        clear_op_stats(db, "DELETE FROM op_stats", "storing the op table"),
        op_stat(db, insert_sql("INSERT", "op_stats", sd::kSessionOpStatsColumns).c_str(), "storing the op table"),
        meta(db, insert_sql("INSERT OR REPLACE", "meta", sd::kMetaColumns).c_str(), "storing meta"),
        optimizer_step(db, insert_sql("INSERT OR REPLACE", "optimizer_steps", sd::kOptimizerStepColumns).c_str(),
                       "storing optimizer steps"),
        readiness(db, insert_sql("INSERT OR REPLACE", "readiness", sd::kReadinessColumns).c_str(),
                  "storing precision readiness"),
        scheduler_step(db, insert_sql("INSERT OR REPLACE", "scheduler_steps", sd::kSchedulerStepColumns).c_str(),
                       "storing scheduler steps"),
        backward_check(db, insert_sql("INSERT OR REPLACE", "backward_checks", sd::kBackwardCheckColumns).c_str(),
                       "storing backward checks"),
        clear_compiled_kernels(db, "DELETE FROM compiled_kernels", "storing compiled kernels"),
        compiled_kernel(db, insert_sql("INSERT", "compiled_kernels", sd::kCompiledKernelColumns).c_str(),
                        "storing compiled kernels") {}
  // Op calls go kOpCallsPerInsert rows to a statement: one statement's fixed cost
  // (step, reset, the VM's start and end) per row was a third of the writer's time.
  static constexpr size_t kOpCallsPerInsert = 32;
  Stmt step, op_signature, op_call, op_calls, kernel, find_name, add_name, clear_kernel_stats, clear_kernel_ops,
      clear_kernel_enclosing_ops, kernel_stat, kernel_op, kernel_enclosing_op, gradient, activation, clear_op_stats,
      op_stat, meta, optimizer_step, readiness, scheduler_step, backward_check, clear_compiled_kernels,
      compiled_kernel;
};

bool is_live_session(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // A shared lock is refused while a writer holds its exclusive one; closing the
  // descriptor releases ours.
  const bool live = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return live;
}

std::string why_not_replaceable(const std::string& path) {
  if (is_live_session(path)) return "another ampscope run is writing it";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return "";
  char header[16] = {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  const bool sqlite = ::pread(fd, header, sizeof header, 0) == static_cast<ssize_t>(sizeof header) &&
                      std::memcmp(header, "SQLite format 3", sizeof header) == 0;
  ::close(fd);
  return sqlite ? "" : "it is not a session file (not an SQLite database)";
}

std::unique_ptr<SessionWriter> SessionWriter::create(const std::string& path,
                                                     const SessionMeta& meta, bool overwrite) {
  SessionWriterOptions options;
  options.overwrite = overwrite;
  return create(path, meta, options);
}

std::unique_ptr<SessionWriter> SessionWriter::create(const std::string& path,
                                                     const SessionMeta& meta,
                                                     const SessionWriterOptions& options) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && st.st_size > 0) {
    if (!options.overwrite)
      throw StoreError("session file " + quoted(path) + " already exists (not overwriting it)");
    if (const std::string why = why_not_replaceable(path); !why.empty())
      throw StoreError("not replacing " + quoted(path) + ": " + why);
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      if (::unlink((path + suffix).c_str()) != 0 && errno != ENOENT)
        throw StoreError("cannot replace session file " + quoted(path) + ": " +
                         std::generic_category().message(errno));
  }
  // Taken before SQLite opens the file: closing this descriptor before SQLite's
  // would drop SQLite's own (fcntl) locks, so it is closed after the database.
  const int lock_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (lock_fd < 0)
    throw StoreError("cannot create session file " + quoted(path) + ": " + std::generic_category().message(errno));
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd);
    throw StoreError("not replacing " + quoted(path) + ": another ampscope run is writing it");
  }
  std::unique_ptr<SessionWriter> writer;
  try {
    writer = create_locked(path, lock_fd, meta, options);
  } catch (...) {
    ::close(lock_fd);
    throw;
  }
  return writer;
}

std::unique_ptr<SessionWriter> SessionWriter::create_locked(const std::string& path, int lock_fd,
                                                            const SessionMeta& meta,
                                                            const SessionWriterOptions& options) {
  // One thread at a time: this one until the writer's thread starts, that one until
  // close() has joined it. SQLite's lock around every call (a few % of the writer's
  // time at a million rows a second) is not needed.
  Db db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
  sqlite3_busy_timeout(db.get(), 100);
  // A 16 MiB page cache: the tables and their indices (kernels by start, op and step; op calls
  // by step) grow at their right edge, so the hot pages are few. A larger one costs the
  // training process far more than its size: with 64 MiB, a CPU GPT-2 run's resident set grew
  // 428 MiB over 450 steps of full capture, with 16 MiB 115 MiB, for the same op write rate
  // (docs/performance.md, session 49).
  db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-16384;",
          "setting up the file");
  db.exec("BEGIN IMMEDIATE", "creating the schema");
  db.exec(store_detail::kSchemaSql, "creating the schema");
  db.exec(("PRAGMA application_id=" + std::to_string(kSessionApplicationId) +
           "; PRAGMA user_version=" + std::to_string(kSessionFormatVersion))
              .c_str(),
          "creating the schema");
  {
    Stmt put(db, insert_sql("INSERT OR REPLACE", "meta", sd::kMetaColumns).c_str(), "storing meta");
    for (const auto& [k, v] : meta_pairs(meta)) {
      sd::bind_meta(put, 1, k, v);
      put.run();
    }
    sd::bind_meta(put, 1, meta_key::kStoreOutcome, meta_key::kStoreOutcomeOpen);
    put.run();
    // Who writes it, in the first commit: a reader that opens the file as soon as it exists
    // (the GUI following a run it started) knows from its first read whether the writer runs.
    for (const auto& [key, value] : {std::pair{meta_key::kPid, std::to_string(current_process_id())},
                                     std::pair{meta_key::kHost, current_host_name()}}) {
      sd::bind_meta(put, 1, key, value);
      put.run();
    }
  }
  db.exec("COMMIT", "creating the schema");
  return std::unique_ptr<SessionWriter>(new SessionWriter(path, lock_fd, std::move(db), options));
}

SessionWriter::SessionWriter(std::string path, int lock_fd, Db db, const SessionWriterOptions& options)
    : path_(std::move(path)),
      lock_fd_(lock_fd),
      db_(std::move(db)),
      options_(options),
      stmts_(std::make_unique<Statements>(db_)) {
  options_.queue_capacity = std::max<size_t>(1, options_.queue_capacity);
  thread_ = std::thread([this] {
    lower_this_thread_priority();
    run();
  });
  name_thread(thread_, "amp-writer");
}

SessionWriter::~SessionWriter() { close(); }

void SessionWriter::enqueue(Item&& item, bool droppable) {
  {
    std::lock_guard lk(mutex_);
    if (closed_ || (droppable && queue_.size() >= options_.queue_capacity)) {
      ++dropped_;
      return;  // `item` dies after the lock is released
    }
    if (const auto* ops = std::get_if<std::vector<OpRecord>>(&item)) ops_waiting_ += ops->size();
    queue_.push_back(std::move(item));
    ++enqueued_seq_;
  }
  work_cv_.notify_one();
}

void SessionWriter::append_step(StepRecord step) { enqueue(Item(step), false); }
void SessionWriter::append_ops(std::vector<OpRecord>&& ops) {
  if (!ops.empty()) enqueue(Item(std::move(ops)), true);
}
void SessionWriter::append_kernels(std::vector<KernelRecord>&& kernels) {
  if (!kernels.empty()) enqueue(Item(std::move(kernels)), true);
}
void SessionWriter::append_gradients(std::vector<GradientSample>&& samples) {
  if (!samples.empty()) enqueue(Item(std::move(samples)), true);
}
void SessionWriter::append_optimizer_steps(std::vector<OptimizerStepRecord>&& records) {
  if (!records.empty()) enqueue(Item(std::move(records)), false);
}
void SessionWriter::append_scheduler_steps(std::vector<SchedulerStepRecord>&& records) {
  if (!records.empty()) enqueue(Item(std::move(records)), false);
}
void SessionWriter::append_backward_checks(std::vector<BackwardCheck>&& checks) {
  if (!checks.empty()) enqueue(Item(std::move(checks)), false);
}
void SessionWriter::append_activations(std::vector<ActivationSample>&& samples) {
  if (!samples.empty()) enqueue(Item(std::move(samples)), true);
}
void SessionWriter::append_readiness(std::vector<ReadinessSample>&& samples) {
  if (!samples.empty()) enqueue(Item(std::move(samples)), true);
}
// The op table and meta are small and replace earlier values: never dropped, so the
// final table and state survive a burst that filled the queue.
void SessionWriter::replace_op_stats(std::vector<OpStats>&& stats) {
  enqueue(Item(ReplaceOpStats{std::move(stats)}), false);
}
void SessionWriter::replace_kernel_stats(std::vector<KernelSummary>&& rows, KernelLaunchers launchers,
                                         KernelLaunchers enclosing) {
  enqueue(Item(ReplaceKernelStats{std::move(rows), std::move(launchers), std::move(enclosing)}), false);
}
void SessionWriter::replace_compiled_kernels(std::vector<CompiledKernelRow>&& rows) {
  enqueue(Item(ReplaceCompiledKernels{std::move(rows)}), false);
}
void SessionWriter::set_meta_value(std::string key, std::string value) {
  enqueue(Item(MetaValue{std::move(key), std::move(value)}), false);
}

void SessionWriter::flush() {
  std::unique_lock lk(mutex_);
  if (closed_ && !thread_.joinable()) return;
  const uint64_t target = enqueued_seq_;
  if (committed_seq_ >= target) return;
  ++flush_waiters_;
  work_cv_.notify_one();
  flushed_cv_.wait(lk, [&] { return committed_seq_ >= target; });
  --flush_waiters_;
}

SessionWriter::Waiting SessionWriter::waiting() const {
  std::lock_guard lk(mutex_);
  return {queue_.size(), ops_waiting_};
}

uint64_t SessionWriter::dropped_batches() const {
  std::lock_guard lk(mutex_);
  return dropped_;
}

std::string SessionWriter::last_error() const {
  std::lock_guard lk(mutex_);
  return last_error_;
}

int SessionWriter::close_keeping_live_lock() {
  const int lock_fd = std::exchange(lock_fd_, -1);
  close();
  return lock_fd;
}

void SessionWriter::close() {
  {
    std::lock_guard lk(mutex_);
    if (closed_) return;
    closed_ = true;
    stopping_ = true;
  }
  work_cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  // The thread is gone: SQLite is ours again. Errors here must not throw (destructor).
  // The error first: on a full disk these writes can fail as well, and it says most.
  // store_outcome says "complete" only after all of them went through without one.
  try {
    const std::string error = last_error();
    if (!error.empty()) {
      sd::bind_meta(stmts_->meta, 1, meta_key::kStoreLastError, error);
      stmts_->meta.run();
    }
    const std::string dropped = std::to_string(dropped_batches());
    sd::bind_meta(stmts_->meta, 1, meta_key::kStoreDroppedBatches, dropped);
    stmts_->meta.run();
    if (error.empty()) {
      sd::bind_meta(stmts_->meta, 1, meta_key::kStoreOutcome, meta_key::kStoreOutcomeComplete);
      stmts_->meta.run();
    }
    stmts_.reset();
    db_.exec("PRAGMA wal_checkpoint(TRUNCATE)", "closing");
    // Fails harmlessly (SQLITE_BUSY) while a reader has the file open: it stays WAL.
    sqlite3_exec(db_.get(), "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr);
  } catch (const std::exception& e) {
    std::lock_guard lk(mutex_);
    last_error_ = e.what();
  }
  stmts_.reset();
  db_.close();
  if (lock_fd_ >= 0) ::close(lock_fd_);  // the session is no longer live
  lock_fd_ = -1;
}

void SessionWriter::begin() {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    int rc = sqlite3_exec(db_.get(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) break;
    // Another connection holds the write lock (sqlite3 CLI, a stray writer): wait.
    if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() - start > kBusyGiveUp)
      db_.fail(rc, "starting a transaction");
  }
  in_transaction_ = true;
}

void SessionWriter::commit() {
  db_.exec("COMMIT", "committing");
  in_transaction_ = false;
}

void SessionWriter::run() {
  using Clock = std::chrono::steady_clock;
  uint64_t processed_seq = 0;  // items taken from the queue so far
  uint64_t items_in_txn = 0;
  Clock::time_point txn_start{};
  std::unique_lock lk(mutex_);
  for (;;) {
    const auto deadline =
        in_transaction_ ? txn_start + options_.commit_interval : Clock::time_point::max();
    work_cv_.wait_until(lk, deadline, [&] {
      return !queue_.empty() || stopping_ ||
             (flush_waiters_ > 0 && committed_seq_ < enqueued_seq_) ||
             (in_transaction_ && Clock::now() >= deadline);
    });
    std::deque<Item> batch;
    batch.swap(queue_);
    processed_seq = enqueued_seq_;
    lk.unlock();

    std::string error;
    uint64_t failed = 0;
    uint64_t ops_taken = 0;  // waiting until written (or lost with a failed transaction)
    // A failed transaction loses all of its items; later ones get a fresh one.
    auto abandon = [&](const std::exception& e) {
      error = e.what();
      if (!sqlite3_get_autocommit(db_.get()))
        sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
      in_transaction_ = false;
      kernel_name_ids_.clear();  // ids inserted by the rolled-back transaction are gone
      op_signature_ids_.clear();  // and so may be signatures
      failed += items_in_txn;
      items_in_txn = 0;
    };
    for (auto& item : batch) {
      if (const auto* ops = std::get_if<std::vector<OpRecord>>(&item)) ops_taken += ops->size();
      try {
        if (!in_transaction_) {
          begin();
          txn_start = Clock::now();
        }
        ++items_in_txn;
        write(item);
      } catch (const std::exception& e) {
        if (!in_transaction_) ++failed;  // begin() failed: this item was never written
        abandon(e);
      }
    }
    batch.clear();  // free the records outside the lock
    lk.lock();
    const bool want_commit = flush_waiters_ > 0 || stopping_;
    lk.unlock();
    if (in_transaction_ && (want_commit || Clock::now() - txn_start >= options_.commit_interval)) {
      try {
        commit();
        items_in_txn = 0;
      } catch (const std::exception& e) {
        abandon(e);
      }
    }

    lk.lock();
    ops_waiting_ -= ops_taken;
    if (!error.empty()) {
      last_error_ = error;
      dropped_ += failed;
    }
    if (!in_transaction_) committed_seq_ = processed_seq;
    flushed_cv_.notify_all();
    if (stopping_ && queue_.empty() && !in_transaction_) break;
  }
}

void SessionWriter::write(Item& item) {
  auto& s = *stmts_;
  if (auto* step = std::get_if<StepRecord>(&item)) {
    sd::bind_step(s.step, 1, *step);
    s.step.run();
  } else if (auto* ops = std::get_if<std::vector<OpRecord>>(&item)) {
    sd::EncodedOpSignature encoded;
    constexpr size_t kRows = Statements::kOpCallsPerInsert;
    const size_t whole = ops->size() / kRows * kRows;
    for (size_t i = 0; i < ops->size(); ++i) {
      const OpRecord& op = (*ops)[i];
      const auto signature = op_signature_ids_.find_or_add(op);
      if (signature.is_new) {
        sd::bind_op_signature(s.op_signature, 1, signature.id, op, encoded);
        s.op_signature.run();
      }
      if (i < whole) {
        sd::bind_op_call(s.op_calls, static_cast<int>((i % kRows) * sd::kOpCallColumns.size() + 1), op, signature.id);
        if (i % kRows == kRows - 1) s.op_calls.run();
      } else {
        sd::bind_op_call(s.op_call, 1, op, signature.id);
        s.op_call.run();
      }
    }
  } else if (auto* kernels = std::get_if<std::vector<KernelRecord>>(&item)) {
    write_kernels(*kernels);
  } else if (auto* grads = std::get_if<std::vector<GradientSample>>(&item)) {
    std::string histogram;
    for (const auto& g : *grads) {
      sd::bind_gradient(s.gradient, 1, g, histogram);
      s.gradient.run();
    }
  } else if (auto* activations = std::get_if<std::vector<ActivationSample>>(&item)) {
    for (const auto& a : *activations) {
      sd::bind_activation(s.activation, 1, a);
      s.activation.run();
    }
  } else if (auto* readiness = std::get_if<std::vector<ReadinessSample>>(&item)) {
    for (const ReadinessSample& sample : *readiness) {
      for (const QuantFormatSpec& spec : kQuantFormats) {
        sd::bind_readiness(s.readiness, 1, sample, spec.format);
        s.readiness.run();
      }
    }
  } else if (auto* table = std::get_if<ReplaceOpStats>(&item)) {
    s.clear_op_stats.run();
    sd::EncodedOpStats encoded;
    for (const auto& r : table->stats) {
      sd::bind_session_op_stats(s.op_stat, 1, r, encoded);
      s.op_stat.run();
    }
  } else if (auto* compiled = std::get_if<ReplaceCompiledKernels>(&item)) {
    s.clear_compiled_kernels.run();
    std::string ops_json;
    for (const auto& r : compiled->rows) {
      store_detail::bind_compiled_kernel(s.compiled_kernel, 1, r, ops_json);
      s.compiled_kernel.run();
    }
  } else if (auto* kernel_table = std::get_if<ReplaceKernelStats>(&item)) {
    write_kernel_stats(*kernel_table);
  } else if (auto* kv = std::get_if<MetaValue>(&item)) {
    sd::bind_meta(s.meta, 1, kv->key, kv->value);
    s.meta.run();
  } else if (auto* records = std::get_if<std::vector<OptimizerStepRecord>>(&item)) {
    for (const auto& r : *records) {
      sd::bind_optimizer_step(s.optimizer_step, 1, r);
      s.optimizer_step.run();
    }
  } else if (auto* calls = std::get_if<std::vector<SchedulerStepRecord>>(&item)) {
    for (const auto& r : *calls) {
      sd::bind_scheduler_step(s.scheduler_step, 1, r);
      s.scheduler_step.run();
    }
  } else if (auto* checks = std::get_if<std::vector<BackwardCheck>>(&item)) {
    for (const auto& r : *checks) {
      sd::bind_backward_check(s.backward_check, 1, r);
      s.backward_check.run();
    }
  }
}

int64_t SessionWriter::kernel_name_id(const std::string& name) {
  auto& s = *stmts_;
  if (auto it = kernel_name_ids_.find(name); it != kernel_name_ids_.end()) return it->second;
  int64_t id = 0;
  s.find_name.bind_text(1, name);
  if (s.find_name.step()) {
    id = s.find_name.i64(0);
    s.find_name.reset();
  } else {
    s.find_name.reset();
    s.add_name.bind_text(1, name).run();
    id = sqlite3_last_insert_rowid(db_.get());
  }
  kernel_name_ids_.emplace(name, id);
  return id;
}

void SessionWriter::write_kernels(const std::vector<KernelRecord>& kernels) {
  auto& s = *stmts_;
  for (const auto& k : kernels) {
    sd::bind_kernel(s.kernel, 1, k, kernel_name_id(k.name));
    s.kernel.run();
  }
}

void SessionWriter::write_kernel_stats(const ReplaceKernelStats& table) {
  auto& s = *stmts_;
  s.clear_kernel_stats.run();
  s.clear_kernel_ops.run();
  s.clear_kernel_enclosing_ops.run();
  for (const KernelSummary& k : table.rows) {
    sd::bind_kernel_stat(s.kernel_stat, 1, k, kernel_name_id(k.name));
    s.kernel_stat.run();
  }
  for (const auto& [launchers, stmt] : {std::pair{&table.launchers, &s.kernel_op},
                                        std::pair{&table.enclosing, &s.kernel_enclosing_op}}) {
    for (const auto& [kernel, ops] : *launchers) {
      const int64_t name_id = kernel_name_id(kernel);
      for (const auto& [op_name, calls] : ops) {
        sd::bind_kernel_op(*stmt, 1, name_id, op_name, calls);
        stmt->run();
      }
    }
  }
}

}  // namespace ampscope::profiler
