#pragma once
// Writes one profiling session to an SQLite file (.ampscope) without stalling the
// profiled program: append_* move the data into a bounded queue under a short lock;
// the writer's own thread commits it in WAL transactions (at least every
// commit_interval, and on flush()). A full queue drops the batch and counts it, so
// a slow disk costs data, never step time. A process killed mid-run leaves a
// readable file holding everything up to the last commit.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include "profiler/analysis/compiled_kernels.h"
#include "profiler/analysis/quantization_readiness.h"
#include "profiler/records.h"
#include "profiler/store/op_signatures.h"
#include "profiler/store/sqlite_util.h"

namespace ampscope::profiler {

// A SessionWriter holds an advisory lock (flock) on its file from create() to close():
// true while some process (this one included) records `path`. A killed run releases
// the lock with the process, so its session is no longer live. Call it before this
// process opens `path` with SQLite: closing the probe's descriptor would drop
// SQLite's own locks on the file.
bool is_live_session(const std::string& path);

// Why `path` must not be replaced by a new session, even with --force; "" when it may:
// a live session, or a file that is not an SQLite file (a script or a data file
// given to --out by mistake).
std::string why_not_replaceable(const std::string& path);

struct SessionWriterOptions {
  bool overwrite = false;  // replace an existing non-empty file
  // Batches waiting for the writer thread; it holds at most as many more while
  // writing them, so memory stays bounded by twice this many batches.
  size_t queue_capacity = 4096;
  std::chrono::milliseconds commit_interval{200};
};

class SessionWriter {
 public:
  // Creates the file with its schema and meta (and this process's pid and host, its
  // writer's), committed before returning, so the
  // file is a valid (empty) session from here on. Throws StoreError if the file
  // exists and is not empty (unless options.overwrite), cannot be replaced
  // (why_not_replaceable) or cannot be created.
  static std::unique_ptr<SessionWriter> create(const std::string& path, const SessionMeta& meta,
                                               const SessionWriterOptions& options = {});
  static std::unique_ptr<SessionWriter> create(const std::string& path, const SessionMeta& meta,
                                               bool overwrite);
  ~SessionWriter();
  SessionWriter(const SessionWriter&) = delete;
  SessionWriter& operator=(const SessionWriter&) = delete;

  // Hot path, any thread: a move and a short lock. A step with a number already
  // stored replaces it. Steps and optimizer steps are never dropped for a full
  // queue (a few bytes each); the other batches are.
  void append_step(StepRecord step);
  void append_ops(std::vector<OpRecord>&& ops);
  void append_kernels(std::vector<KernelRecord>&& kernels);
  void append_gradients(std::vector<GradientSample>&& samples);
  // Rows of a step already stored (same step and optimizer) replace them.
  void append_optimizer_steps(std::vector<OptimizerStepRecord>&& records);
  void append_activations(std::vector<ActivationSample>&& samples);
  // Precision readiness of a sampled step's layers: a row per format of each sample.
  void append_readiness(std::vector<ReadinessSample>&& samples);
  // Never dropped, like steps (a row per scheduler call or checked step). A call or a
  // step already stored is replaced.
  void append_scheduler_steps(std::vector<SchedulerStepRecord>&& records);
  void append_backward_checks(std::vector<BackwardCheck>&& checks);
  // The aggregated op table replaces the stored one as a whole.
  void replace_op_stats(std::vector<OpStats>&& stats);
  // torch.compile'd code's kernels with their times, replacing the previous rows.
  void replace_compiled_kernels(std::vector<CompiledKernelRow>&& rows);
  // The aggregated kernel table (KernelAggregator) replaces the stored one as a whole:
  // rows, and every (kernel name -> op name -> calls) pair.
  using KernelLaunchers = std::unordered_map<std::string, std::map<std::string, int64_t>>;
  // `enclosing`: (kernel, op it ran inside) -> calls, for KernelSummary::enclosing_ops.
  void replace_kernel_stats(std::vector<KernelSummary>&& rows, KernelLaunchers launchers,
                            KernelLaunchers enclosing = {});
  void set_meta_value(std::string key, std::string value);

  // Blocks until everything queued before the call is committed (or failed).
  void flush();
  // flush + stop the thread + checkpoint the WAL into the file and leave it in
  // rollback-journal mode, so a finished session is one self-contained file.
  // Idempotent; the destructor calls it. Appends after close are dropped.
  void close();
  // close(), but the flock that marks the file live stays held and is returned: for
  // a writer that goes on writing the file (the comparison's, for minutes), so no
  // other run may replace it meanwhile. The caller closes it after its own database.
  int close_keeping_live_lock();

  const std::string& path() const { return path_; }
  // What waits to be written, read under one lock: batches (the queue; the profiler
  // sheds ops before it fills: OpSamplingRule) and the op records in them (queued
  // or being written). capacity() is the queue's.
  struct Waiting {
    size_t batches = 0;
    uint64_t ops = 0;
  };
  Waiting waiting() const;
  size_t capacity() const { return options_.queue_capacity; }
  // Batches not stored: the queue was full, the writer was closed, or a write failed.
  uint64_t dropped_batches() const;
  // The last write error, empty if none. Writing goes on after an error.
  std::string last_error() const;

 private:
  struct ReplaceOpStats {
    std::vector<OpStats> stats;
  };
  struct ReplaceKernelStats {
    std::vector<KernelSummary> rows;
    KernelLaunchers launchers;
    KernelLaunchers enclosing;
  };
  struct MetaValue {
    std::string key, value;
  };
  struct ReplaceCompiledKernels {
    std::vector<CompiledKernelRow> rows;
  };
  using Item = std::variant<StepRecord, std::vector<OpRecord>, std::vector<KernelRecord>,
                            std::vector<GradientSample>, ReplaceOpStats, ReplaceKernelStats,
                            MetaValue, std::vector<OptimizerStepRecord>, std::vector<ActivationSample>,
                            std::vector<ReadinessSample>, std::vector<SchedulerStepRecord>,
                            std::vector<BackwardCheck>, ReplaceCompiledKernels>;
  struct Statements;

  static std::unique_ptr<SessionWriter> create_locked(const std::string& path, int lock_fd, const SessionMeta& meta,
                                                      const SessionWriterOptions& options);
  SessionWriter(std::string path, int lock_fd, store_detail::Db db, const SessionWriterOptions& options);
  void enqueue(Item&& item, bool droppable);
  void run();
  void write(Item& item);
  void write_kernels(const std::vector<KernelRecord>& kernels);
  void write_kernel_stats(const ReplaceKernelStats& table);
  int64_t kernel_name_id(const std::string& name);
  void begin();
  void commit();

  std::string path_;
  int lock_fd_ = -1;  // holds the flock that marks the session live; closed after db_
  store_detail::Db db_;
  SessionWriterOptions options_;

  // Lock order: only mutex_; SQLite is touched by the writer thread alone while it runs.
  mutable std::mutex mutex_;
  std::condition_variable work_cv_;     // writer waits: items, flush or stop
  std::condition_variable flushed_cv_;  // flush() waits: committed_seq_
  std::deque<Item> queue_;
  uint64_t enqueued_seq_ = 0;   // items accepted so far
  uint64_t committed_seq_ = 0;  // items committed (or failed) so far
  int flush_waiters_ = 0;
  bool stopping_ = false;
  bool closed_ = false;
  uint64_t dropped_ = 0;
  uint64_t ops_waiting_ = 0;
  std::string last_error_;

  // Writer-thread state.
  std::unique_ptr<Statements> stmts_;
  std::unordered_map<std::string, int64_t> kernel_name_ids_;  // a cache of kernel_names
  store_detail::OpSignatureIds op_signature_ids_;              // what op_signatures holds
  bool in_transaction_ = false;
  std::thread thread_;
};

}  // namespace ampscope::profiler
