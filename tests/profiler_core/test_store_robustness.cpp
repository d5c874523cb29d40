// The store under the conditions a profiler meets: a killed process, a reader
// beside a live writer, a slow disk, and files that are not (good) sessions.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/profiler_core/session_fixture.h"
#include "tests/support/test_support.h"

namespace ampscope::test {
namespace {

std::string open_error(const std::string& path) {
  try {
    SessionReader::open(path);
  } catch (const StoreError& e) {
    return e.what();
  }
  return "(no error)";
}

void sql(const std::string& path, const char* statements) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, statements, nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST(StoreRobustness, SessionOfAKilledProcessKeepsEveryFlushedStep) {
  ScratchDir dir;
  const std::string path = dir / "killed.ampscope";
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    auto w = SessionWriter::create(path, make_fixture().meta);
    const Fixture f = make_fixture();
    for (int64_t step = 1;; ++step) {
      StepRecord s;
      s.step = step;
      s.loss = 1.0 / static_cast<double>(step);
      w->append_step(s);
      w->append_kernels(std::vector<KernelRecord>(f.kernels));
      if (step % 5 == 0) {
        w->flush();
        if (write(fds[1], &step, sizeof step) != sizeof step) _exit(3);
      }
    }
  }
  close(fds[1]);
  int64_t flushed = 0;
  while (flushed < 40) ASSERT_EQ(read(fds[0], &flushed, sizeof flushed), ssize_t{sizeof flushed});
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  close(fds[0]);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(std::filesystem::exists(path + "-wal"));  // the case under test: WAL not folded in

  const auto r = SessionReader::open(path);
  const auto steps = r.steps();
  ASSERT_GE(static_cast<int64_t>(steps.size()), flushed);
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].step, static_cast<int64_t>(i) + 1);
  EXPECT_GE(r.kernel_count(), flushed * 12);
  EXPECT_EQ(r.meta().device_name, "NVIDIA H100 80GB HBM3");
  // Never closed: the writer's outcome stays as the session was created.
  EXPECT_EQ(r.meta_value("store_outcome"), "open");
}

TEST(StoreRobustness, ReaderSeesCommittedDataWhileTheWriterRuns) {
  ScratchDir dir;
  const std::string path = dir / "live.ampscope";
  const Fixture f = make_fixture();
  auto w = SessionWriter::create(path, f.meta);
  const auto early = SessionReader::open(path);  // an empty session is already valid
  EXPECT_TRUE(early.steps().empty());

  w->append_step(f.steps[0]);
  w->flush();
  const auto r = SessionReader::open(path);
  EXPECT_EQ(r.steps().size(), 1u);

  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::string reader_error;
  std::thread reader([&] {
    try {
      size_t last = 0;
      while (!done) {
        const size_t n = r.steps().size();
        if (n < last) reader_error = "rows went backwards";
        last = n;
        r.kernels(0, INT64_MAX, 100);
        r.top_kernels(5);
        ++reads;
      }
    } catch (const std::exception& e) {
      reader_error = e.what();
    }
  });
  for (int64_t s = 2; s <= 300; ++s) {
    StepRecord step = f.steps[0];
    step.step = s;
    w->append_step(step);
    w->append_kernels(std::vector<KernelRecord>(f.kernels));
    if (s % 50 == 0) w->flush();
  }
  w->flush();
  done = true;
  reader.join();
  EXPECT_EQ(reader_error, "");
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(r.steps().size(), 300u);
  EXPECT_EQ(early.steps().size(), 300u);  // each query is a fresh read transaction

  w->close();  // a reader is open: the file may stay in WAL mode, still readable
  EXPECT_EQ(r.kernel_count(), 299 * 12);
  EXPECT_EQ(SessionReader::open(path).steps().size(), 300u);
}

// A stalled disk: appends never block the training thread; the steps (a few bytes each)
// are all kept, while op batches beyond the queue are dropped and counted (issue 32:
// a full queue used to drop steps with the ops, and a third of a fast loop's steps).
TEST(StoreRobustness, AppendsNeverBlockStepsAreKeptAndDroppedOpBatchesAreCounted) {
  ScratchDir dir;
  const std::string path = dir / "slow.ampscope";
  SessionWriterOptions options;
  options.queue_capacity = 2;
  auto w = SessionWriter::create(path, SessionMeta{}, options);

  // Another connection holds the write lock: the writer thread stalls as on a slow disk.
  sqlite3* blocker = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &blocker), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(blocker, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);

  constexpr int kSteps = 200;
  const Fixture f = make_fixture();
  auto slowest = std::chrono::nanoseconds::zero();
  const auto start = std::chrono::steady_clock::now();
  for (int s = 1; s <= kSteps; ++s) {
    StepRecord step;
    step.step = s;
    std::vector<OpRecord> ops = f.ops;
    for (auto& op : ops) op.step = s;
    const auto t = std::chrono::steady_clock::now();
    w->append_step(step);
    w->append_ops(std::move(ops));
    slowest = std::max(slowest, std::chrono::steady_clock::now() - t);
  }
  const auto total = std::chrono::steady_clock::now() - start;
  // A blocking append would wait for the lock, which is only released after the loop,
  // i.e. the writer's 30 s busy wait: the bounds sit far below that and far above a move
  // and a lock, with room for a test machine that deschedules us (CI runs tests 2 at a time).
  EXPECT_LT(slowest, std::chrono::seconds(5));
  EXPECT_LT(total, std::chrono::seconds(10));
  // Op batches: at most the queue (2) plus what the stalled writer took from it (<= 2) are kept.
  EXPECT_GE(w->dropped_batches(), uint64_t{kSteps - 4});

  sqlite3_exec(blocker, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(blocker);
  w->flush();
  const uint64_t dropped = w->dropped_batches();
  w->close();
  EXPECT_EQ(w->last_error(), "");
  const auto r = SessionReader::open(path);
  EXPECT_EQ(r.steps().size(), size_t{kSteps}) << "a step was dropped";
  EXPECT_EQ(r.meta_value("store_dropped_batches"), std::to_string(dropped));
  // Batches dropped for a full queue are counted, not an error: the close is complete.
  EXPECT_EQ(r.meta_value("store_outcome"), "complete");
}

TEST(StoreRobustness, ManyProducerThreads) {
  ScratchDir dir;
  const std::string path = dir / "threads.ampscope";
  const Fixture f = make_fixture();
  auto w = SessionWriter::create(path, f.meta);
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t)
    producers.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        StepRecord s;
        s.step = t * 1000 + i;
        w->append_step(s);
        if (i % 10 == 0) w->flush();
      }
    });
  for (auto& p : producers) p.join();
  w->close();
  EXPECT_EQ(w->dropped_batches(), 0u);
  EXPECT_EQ(SessionReader::open(path).steps().size(), 400u);
}

TEST(StoreRobustness, MissingForeignAndEmptyFilesAreClearErrors) {
  ScratchDir dir;
  const std::string missing = dir / "missing.ampscope";
  EXPECT_EQ(open_error(missing),
            "cannot open session '" + missing + "': No such file or directory");
  EXPECT_EQ(open_error(dir.path()),
            "cannot open session '" + dir.path().string() + "': it is a directory");

  const std::string text = dir / "notes.ampscope";
  write_file(text, "step,loss\n1,2.5\n");
  EXPECT_EQ(open_error(text),
            "'" + text + "' is not an ampscope session file (not an SQLite database)");

  const std::string empty = dir / "empty.ampscope";
  write_file(empty, "");
  EXPECT_EQ(open_error(empty), "'" + empty + "' is not an ampscope session file (empty file)");

  const std::string foreign = dir / "x.db";
  sql(foreign, "CREATE TABLE t(a); INSERT INTO t VALUES(1);");
  EXPECT_EQ(open_error(foreign), "'" + foreign + "' is not an ampscope session file");
}

TEST(StoreRobustness, NewerFormatIsRefusedWithItsVersion) {
  ScratchDir dir;
  const std::string path = dir / "future.ampscope";
  write_fixture_file(path, make_fixture());
  sql(path, "PRAGMA user_version = 7");
  EXPECT_EQ(open_error(path), "'" + path +
                                  "' was written by a newer ampscope (session format 7; this "
                                  "build reads up to 2)");
}

// Sessions recorded before the fp8/bf16 shares lack their columns (an additive
// change within format 1): they still open, the fp16 figures read back, the new
// shares read as not measured (NaN).
TEST(StoreRobustness, GradientsWithoutTheFormatColumnsReadAsNotMeasured) {
  ScratchDir dir;
  const std::string path = dir / "old.ampscope";
  write_fixture_file(path, make_fixture());
  for (const char* format : {"bf16", "fp8_e4m3", "fp8_e5m2"})
    for (const char* share : {"underflow", "subnormal", "overflow"})
      sql(path, (std::string("ALTER TABLE gradients DROP COLUMN ") + format + "_" + share + "_fraction").c_str());
  const auto r = SessionReader::open(path);
  const auto grads = r.latest_gradients();
  ASSERT_FALSE(grads.empty());
  EXPECT_EQ(grads.front().fp16_subnormal_fraction, 0.125);
  EXPECT_TRUE(std::isnan(grads.front().fp8_e4m3.underflow));
  EXPECT_TRUE(std::isnan(total_range_shares(grads, FloatFormat::bf16).overflow));
  EXPECT_FALSE(std::isnan(total_range_shares(grads, FloatFormat::fp16).overflow));
}

// Sessions recorded before the eval loss was stored lack steps.eval_loss (an additive
// change within format 1): they open, every other column reads back, and no step has
// a validation.
TEST(StoreRobustness, StepsWithoutTheEvalLossColumnReadAsNoValidation) {
  ScratchDir dir;
  const std::string path = dir / "old.ampscope";
  const Fixture f = make_fixture();
  write_fixture_file(path, f);
  ASSERT_TRUE(has_eval_loss(SessionReader::open(path).steps()[1])) << "the fixture validates after step 2";
  sql(path, "ALTER TABLE steps DROP COLUMN eval_loss");
  const auto steps = SessionReader::open(path).steps();
  ASSERT_EQ(steps.size(), f.steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_FALSE(has_eval_loss(steps[i])) << "step " << steps[i].step;
    EXPECT_EQ(steps[i].loss, f.steps[i].loss);
    EXPECT_EQ(steps[i].end_ns, f.steps[i].end_ns);
  }
}

// Sessions recorded before the capture's work after a step was stored read it as 0.
TEST(StoreRobustness, StepsWithoutTheCaptureAfterColumnReadAsNone) {
  ScratchDir dir;
  const std::string path = dir / "old.ampscope";
  Fixture f = make_fixture();
  f.steps[1].capture_after_ms = 12.5;
  write_fixture_file(path, f);
  ASSERT_EQ(SessionReader::open(path).steps()[1].capture_after_ms, 12.5);
  sql(path, "ALTER TABLE steps DROP COLUMN capture_after_ms");
  const auto steps = SessionReader::open(path).steps();
  ASSERT_EQ(steps.size(), f.steps.size());
  for (const StepRecord& s : steps) {
    EXPECT_EQ(s.capture_after_ms, 0.0) << "step " << s.step;
    EXPECT_EQ(s.cost_ms(), s.step_time_ms);
  }
}

// A session large enough to span many pages, closed cleanly (no WAL left).
std::string big_session(const ScratchDir& dir) {
  const std::string path = dir / "big.ampscope";
  const Fixture f = make_fixture();
  auto w = SessionWriter::create(path, f.meta);
  for (int i = 0; i < 200; ++i) {
    w->append_kernels(std::vector<KernelRecord>(f.kernels));
    w->append_ops(std::vector<OpRecord>(f.ops));
  }
  w->close();
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  return path;
}

TEST(StoreRobustness, TruncatedFilesAreClearErrors) {
  ScratchDir dir;
  const std::string path = big_session(dir);
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 64u * 1024);
  std::filesystem::resize_file(path, size / 2);
  EXPECT_EQ(open_error(path), "'" + path + "' is truncated (" + std::to_string(size / 2) + " of " +
                                  std::to_string(size) + " bytes)");
  std::filesystem::resize_file(path, 50);
  EXPECT_EQ(open_error(path), "'" + path + "' is truncated (50 bytes)");
}

TEST(StoreRobustness, CorruptPagesAreErrorsNotCrashes) {
  ScratchDir dir;
  const std::string path = big_session(dir);
  const auto size = std::filesystem::file_size(path);
  {
    // Keep page 1 (header and schema), overwrite every other page with garbage.
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    std::string garbage(size - 4096, '\xAB');
    f.seekp(4096);
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  const std::string error = open_error(path);
  EXPECT_EQ(error.rfind("'" + path + "' is corrupt: ", 0), 0u) << error;

  // Garbage in the data pages only: whatever the reader touches fails cleanly.
  const std::string path2 = dir / "big2.ampscope";
  std::filesystem::remove(path);
  std::filesystem::rename(big_session(dir), path2);
  {
    std::fstream f(path2, std::ios::in | std::ios::out | std::ios::binary);
    std::string garbage(size / 2, '\x5A');
    f.seekp(static_cast<std::streamoff>(size / 4));
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  int errors = 0;
  try {
    const auto r = SessionReader::open(path2);
    auto attempt = [&](auto&& fn) {
      try {
        fn();
      } catch (const StoreError& e) {
        ++errors;
        EXPECT_NE(std::string(e.what()).find("'" + path2 + "'"), std::string::npos) << e.what();
      }
    };
    attempt([&] { r.ops(); });
    attempt([&] { r.kernels(); });
    attempt([&] { r.top_kernels(10); });
    attempt([&] { r.category_totals(); });
    attempt([&] { r.steps(); });
  } catch (const StoreError&) {
    ++errors;
  }
  EXPECT_GT(errors, 0);
}


// op_stats.compiled (torch.compile's graph ops, python/ampscope/_compiled.py) is additive
// too: a compiled row reads back as compiled, and a file from before the column opens
// with every row eager and every other column intact.
TEST(StoreRobustness, CompiledOpRowsRoundTripAndOlderFilesReadAsEager) {
  ScratchDir dir;
  const std::string path = dir / "compiled.ampscope";
  Fixture f = make_fixture();
  f.op_stats.back().compiled = true;
  write_fixture_file(path, f);
  auto rows = SessionReader::open(path).op_stats();
  ASSERT_EQ(rows.size(), f.op_stats.size());
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].compiled, f.op_stats[i].compiled) << rows[i].name;

  sql(path, "ALTER TABLE op_stats DROP COLUMN compiled");
  rows = SessionReader::open(path).op_stats();
  ASSERT_EQ(rows.size(), f.op_stats.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_FALSE(rows[i].compiled) << rows[i].name;
    EXPECT_EQ(rows[i].name, f.op_stats[i].name);
    EXPECT_EQ(rows[i].top_level, f.op_stats[i].top_level);
  }
}

// Compiled graphs' kernels with their GPU time (issue #28), first calls' part included,
// read back as written; files from before the GPU was joined lack the GPU columns and
// read as no GPU kernel.
TEST(StoreRobustness, CompiledKernelGpuTimesRoundTripAndOlderFilesReadAsNone) {
  ScratchDir dir;
  const std::string path = dir / "compiled.ampscope";
  const Fixture f = make_fixture();
  {
    auto w = SessionWriter::create(path, f.meta);
    write_fixture(*w, f);
    profiler::CompiledKernelRow graph;
    graph.graph = 2;
    graph.phase = profiler::Phase::kForward;
    graph.kind = profiler::kCompiledGraphCall;
    graph.calls = 3;
    graph.cpu_time_ns = 900;
    graph.kernels = 12;
    graph.tensor_core_kernels = 3;
    graph.gpu_time_ns = 4500;
    graph.first_call_gpu_ns = 1500;
    profiler::CompiledKernelRow triton = graph;
    triton.kind = profiler::kCompiledFusedKernel;
    triton.kernel = "triton_poi_fused_mm_0";
    triton.cpu_time_ns = 0;
    triton.kernels = 3;
    triton.tensor_core_kernels = 0;
    triton.gpu_time_ns = 1200;
    triton.first_call_gpu_ns = 400;
    w->replace_compiled_kernels({graph, triton});
    w->close();
    ASSERT_EQ(w->last_error(), "");
  }
  auto rows = SessionReader::open(path).compiled_kernels();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kernels, 12);
  EXPECT_EQ(rows[0].tensor_core_kernels, 3);
  EXPECT_EQ(rows[0].gpu_time_ns, 4500);
  EXPECT_EQ(rows[1].kernel, "triton_poi_fused_mm_0");
  EXPECT_EQ(rows[1].gpu_time_ns, 1200);
  EXPECT_EQ(rows[0].first_call_gpu_ns, 1500);
  EXPECT_EQ(rows[1].first_call_gpu_ns, 400);

  for (const char* column : {"kernels", "tensor_core_kernels", "gpu_time_ns", "first_call_gpu_ns"})
    sql(path, (std::string("ALTER TABLE compiled_kernels DROP COLUMN ") + column).c_str());
  rows = SessionReader::open(path).compiled_kernels();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].cpu_time_ns, 900);
  EXPECT_EQ(rows[0].gpu_time_ns, 0);
  EXPECT_EQ(rows[0].first_call_gpu_ns, 0);
  EXPECT_EQ(rows[1].kernels, 0);
}

}  // namespace
}  // namespace ampscope::test
