// What is written comes back unchanged, and the aggregate queries agree with the rows.
#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>

#include "profiler/analysis/kernel_aggregator.h"
#include "profiler/analysis/warmup_step.h"
#include "profiler/process_identity.h"
#include "profiler/session_meta_keys.h"
#include "tests/profiler_core/session_fixture.h"
#include "tests/support/test_support.h"

namespace ampscope::test {
namespace {

void expect_same(const OpRecord& a, const OpRecord& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.parent_id, b.parent_id);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.phase, b.phase);
  EXPECT_EQ(a.category, b.category);
  EXPECT_EQ(a.module, b.module);
  EXPECT_EQ(a.sequence_nr, b.sequence_nr);
  EXPECT_EQ(a.forward_op_id, b.forward_op_id);
  EXPECT_EQ(a.depth, b.depth);
  EXPECT_EQ(a.thread_id, b.thread_id);
  EXPECT_EQ(a.start_ns, b.start_ns);
  EXPECT_EQ(a.end_ns, b.end_ns);
  EXPECT_EQ(a.input_dtypes, b.input_dtypes);
  EXPECT_EQ(a.input_shapes, b.input_shapes);
  EXPECT_EQ(a.output_dtypes, b.output_dtypes);
  EXPECT_EQ(a.cast_bytes, b.cast_bytes);
}

void expect_same(const KernelRecord& a, const KernelRecord& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.correlation_id, b.correlation_id);
  EXPECT_EQ(a.op_id, b.op_id);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.start_ns, b.start_ns);
  EXPECT_EQ(a.end_ns, b.end_ns);
  EXPECT_EQ(a.grid, b.grid);
  EXPECT_EQ(a.block, b.block);
  EXPECT_EQ(a.registers_per_thread, b.registers_per_thread);
  EXPECT_EQ(a.shared_memory_bytes, b.shared_memory_bytes);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.tensor_core_by_name, b.tensor_core_by_name);
}

void expect_same(const StepRecord& a, const StepRecord& b) {
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_EQ(a.lr, b.lr);
  EXPECT_EQ(a.loss_scale, b.loss_scale);
  EXPECT_EQ(a.found_inf, b.found_inf);
  EXPECT_EQ(a.skipped, b.skipped);
  EXPECT_EQ(a.growth_tracker, b.growth_tracker);
  EXPECT_EQ(a.grad_norm, b.grad_norm);
  EXPECT_EQ(a.step_time_ms, b.step_time_ms);
  EXPECT_EQ(a.capture_after_ms, b.capture_after_ms);
  EXPECT_EQ(a.samples_per_second, b.samples_per_second);
  EXPECT_EQ(a.mem_allocated_bytes, b.mem_allocated_bytes);
  EXPECT_EQ(a.mem_reserved_bytes, b.mem_reserved_bytes);
  EXPECT_EQ(a.mem_peak_bytes, b.mem_peak_bytes);
  EXPECT_EQ(a.end_ns, b.end_ns);
  // NaN (no validation after the step) must come back as NaN, a value as itself.
  EXPECT_EQ(has_eval_loss(a), has_eval_loss(b)) << "step " << a.step;
  if (has_eval_loss(a) && has_eval_loss(b)) {
    EXPECT_EQ(a.eval_loss, b.eval_loss);
  }
}

void expect_same(const GradientSample& a, const GradientSample& b) {
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.parameter, b.parameter);
  EXPECT_EQ(a.loss_scale, b.loss_scale);
  EXPECT_EQ(a.numel, b.numel);
  EXPECT_EQ(a.log2_histogram, b.log2_histogram);
  EXPECT_EQ(a.zero_fraction, b.zero_fraction);
  EXPECT_EQ(a.nonfinite_fraction, b.nonfinite_fraction);
  EXPECT_EQ(a.fp16_underflow_fraction, b.fp16_underflow_fraction);
  EXPECT_EQ(a.fp16_subnormal_fraction, b.fp16_subnormal_fraction);
  EXPECT_EQ(a.fp16_overflow_fraction, b.fp16_overflow_fraction);
  for (const FloatFormatLimits& f : kFloatFormats) {
    EXPECT_EQ(range_shares(a, f.format).underflow, range_shares(b, f.format).underflow) << f.name;
    EXPECT_EQ(range_shares(a, f.format).subnormal, range_shares(b, f.format).subnormal) << f.name;
    EXPECT_EQ(range_shares(a, f.format).overflow, range_shares(b, f.format).overflow) << f.name;
  }
  EXPECT_EQ(a.min_abs_nonzero, b.min_abs_nonzero);
  EXPECT_EQ(a.max_abs, b.max_abs);
  EXPECT_EQ(a.norm, b.norm);
}

void expect_same(const OpStats& a, const OpStats& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.module, b.module);
  EXPECT_EQ(a.phase, b.phase);
  EXPECT_EQ(a.category, b.category);
  EXPECT_EQ(a.top_level, b.top_level);
  EXPECT_EQ(a.input_dtypes, b.input_dtypes);
  EXPECT_EQ(a.input_shapes, b.input_shapes);
  EXPECT_EQ(a.output_dtypes, b.output_dtypes);
  EXPECT_EQ(a.calls, b.calls);
  EXPECT_EQ(a.cpu_time_ns, b.cpu_time_ns);
  EXPECT_EQ(a.gpu_time_ns, b.gpu_time_ns);
  EXPECT_EQ(a.kernels, b.kernels);
  EXPECT_EQ(a.tensor_core_kernels, b.tensor_core_kernels);
  EXPECT_EQ(a.tensor_core_gpu_time_ns, b.tensor_core_gpu_time_ns);
  EXPECT_EQ(a.cast_calls, b.cast_calls);
  EXPECT_EQ(a.cast_bytes, b.cast_bytes);
  EXPECT_EQ(a.cast_cpu_time_ns, b.cast_cpu_time_ns);
  EXPECT_EQ(a.cast_gpu_time_ns, b.cast_gpu_time_ns);
  EXPECT_EQ(a.tensor_core_eligible, b.tensor_core_eligible);
  EXPECT_EQ(a.tensor_core_note, b.tensor_core_note);
}

template <typename T>
void expect_same_lists(const std::vector<T>& a, const std::vector<T>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    expect_same(a[i], b[i]);
  }
}

TEST(StoreRoundTrip, EverythingWrittenReadsBackEqual) {
  ScratchDir dir;
  const std::string path = dir / "run.ampscope";
  const Fixture f = make_fixture();
  write_fixture_file(path, f);

  const auto r = SessionReader::open(path);
  EXPECT_EQ(r.format_version(), 2);
  const SessionMeta m = r.meta();
  EXPECT_EQ(m.ampscope_version, f.meta.ampscope_version);
  EXPECT_EQ(m.created_utc, f.meta.created_utc);
  EXPECT_EQ(m.config_json, f.meta.config_json);
  EXPECT_EQ(m.device, f.meta.device);
  EXPECT_EQ(m.device_name, f.meta.device_name);
  EXPECT_EQ(m.model, f.meta.model);
  EXPECT_EQ(m.data, f.meta.data);
  EXPECT_EQ(m.precision, f.meta.precision);
  EXPECT_EQ(m.parameter_count, f.meta.parameter_count);
  EXPECT_EQ(m.scaler_enabled, f.meta.scaler_enabled);
  EXPECT_EQ(m.torch_version, f.meta.torch_version);
  EXPECT_EQ(m.gpu_tracing, f.meta.gpu_tracing);
  EXPECT_EQ(r.meta_value("store_dropped_batches"), "0");
  EXPECT_EQ(r.meta_value("no such key"), std::nullopt);

  expect_same_lists(r.steps(), f.steps);
  ASSERT_EQ(r.steps().size(), 4u);
  EXPECT_FALSE(has_eval_loss(r.steps()[0]));
  EXPECT_EQ(r.steps()[1].eval_loss, 1.25);
  expect_same_lists(r.ops(), f.ops);  // the fixture is already in start order
  expect_same_lists(r.kernels(), f.kernels);
  expect_same_lists(r.op_stats(), f.op_stats);
  EXPECT_EQ(r.gradient_steps(), (std::vector<int64_t>{2, 4}));
  auto by_param = [](std::vector<GradientSample> v) {
    std::sort(v.begin(), v.end(), [](auto& a, auto& b) {
      return std::tie(a.step, a.parameter) < std::tie(b.step, b.parameter);
    });
    return v;
  };
  auto g2 = r.gradients(2), g4 = r.latest_gradients();
  g2.insert(g2.end(), g4.begin(), g4.end());
  expect_same_lists(g2, by_param(f.gradients));
  EXPECT_TRUE(r.gradients(3).empty());
}

TEST(StoreRoundTrip, RangeQueries) {
  ScratchDir dir;
  const std::string path = dir / "run.ampscope";
  const Fixture f = make_fixture();
  write_fixture_file(path, f);
  const auto r = SessionReader::open(path);

  EXPECT_EQ(r.op_count(), 16);
  EXPECT_EQ(r.kernel_count(), 12);
  const auto step23 = r.ops(2, 3);
  ASSERT_EQ(step23.size(), 8u);
  for (const auto& op : step23) EXPECT_TRUE(op.step == 2 || op.step == 3);
  EXPECT_EQ(r.kernels_in_steps(4, 4).size(), 3u);

  // A window starting inside step 1's GEMM (2.0..2.1 ms) still returns it: overlap, not start.
  const auto w = r.kernels(kT0 + 2'050'000, kT0 + 5'510'000);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].name, f.kernels[1].name);
  EXPECT_EQ(w[1].name, kOddKernel);
  EXPECT_EQ(r.kernels(kT0, kT0 + 4 * kStepNs, 5).size(), 5u);
  EXPECT_TRUE(r.kernels(kT0 + 4 * kStepNs, kT0 + 5 * kStepNs).empty());

  const auto of_addmm = r.kernels_for_op(f.ops[2].id);
  ASSERT_EQ(of_addmm.size(), 1u);
  EXPECT_EQ(of_addmm[0].correlation_id, f.kernels[1].correlation_id);
}

TEST(StoreRoundTrip, TopKernelsAggregateByName) {
  ScratchDir dir;
  const std::string path = dir / "run.ampscope";
  const Fixture f = make_fixture();
  write_fixture_file(path, f);
  const auto top = SessionReader::open(path).top_kernels(2);
  ASSERT_EQ(top.size(), 2u);
  const auto& gemm = top[0];
  EXPECT_EQ(gemm.name, f.kernels[1].name);
  EXPECT_EQ(gemm.calls, 4);
  EXPECT_EQ(gemm.total_ns, 1'000'000);  // 100 + 200 + 300 + 400 us
  EXPECT_EQ(gemm.mean_ns, 250'000);
  EXPECT_EQ(gemm.min_ns, 100'000);
  EXPECT_EQ(gemm.max_ns, 400'000);
  EXPECT_EQ(gemm.tensor_core_calls, 4);
  EXPECT_TRUE(gemm.tensor_core);
  EXPECT_EQ(gemm.launching_ops, (std::vector<std::string>{"aten::addmm"}));
  EXPECT_EQ(gemm.grid, (std::array<int32_t, 3>{4, 2, 1}));
  EXPECT_EQ(gemm.block, (std::array<int32_t, 3>{128, 1, 1}));
  EXPECT_EQ(top[1].name, "Memcpy DtoD (Device -> Device)");  // 4 x 50 us beats 4 x 20 us
  EXPECT_EQ(top[1].grid, (std::array<int32_t, 3>{0, 0, 0}));
  EXPECT_EQ(top[1].kind, ActivityKind::kMemcpy);
  EXPECT_FALSE(top[1].tensor_core);
}

// The kernel table is the profiler's aggregation, stored whole every few seconds:
// the latest replaces the earlier one (no double counting after a re-save).
TEST(StoreRoundTrip, KernelTableIsReplacedAsAWhole) {
  ScratchDir dir;
  const std::string path = dir / "run.ampscope";
  const Fixture f = make_fixture();
  {
    auto w = SessionWriter::create(path, f.meta);
    w->append_ops(std::vector<OpRecord>(f.ops));
    const std::vector<KernelRecord> first_half(f.kernels.begin(), f.kernels.begin() + 3);
    write_kernel_table(*w, f.ops, first_half);
    w->flush();
    write_kernel_table(*w, f.ops, f.kernels);
  }
  const auto top = SessionReader::open(path).top_kernels(10);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].calls, 4);
  EXPECT_EQ(top[0].launching_ops, (std::vector<std::string>{"aten::addmm"}));
  EXPECT_EQ(top[2].launching_ops, (std::vector<std::string>{"AddmmBackward0"}));
}

TEST(StoreRoundTrip, CategoryTotalsSumTopLevelOpStatsRows) {
  ScratchDir dir;
  const std::string path = dir / "run.ampscope";
  const Fixture f = make_fixture();
  write_fixture_file(path, f);
  const auto r = SessionReader::open(path);
  const auto totals = r.category_totals();
  // The records.h function over the stored table, in OpCategory order.
  const auto expected = category_totals(f.op_stats);
  ASSERT_EQ(totals.size(), expected.size());
  ASSERT_EQ(totals.size(), 2u);  // the nested autocast_cast row is left out
  EXPECT_EQ(totals[0].category, OpCategory::kDemoted);
  EXPECT_EQ(totals[0].calls, 8);  // linear + AddmmBackward0
  EXPECT_EQ(totals[0].cpu_time_ns, 2 * 8'000'000);
  EXPECT_EQ(totals[0].gpu_time_ns, 2 * 1'200'000);
  EXPECT_EQ(totals[0].cast_cpu_time_ns, 4 * 300'000);
  EXPECT_EQ(totals[0].cast_gpu_time_ns, 4 * 50'000);
  EXPECT_EQ(totals[1].category, OpCategory::kUnchanged);
  EXPECT_EQ(totals[1].calls, 4);
  EXPECT_EQ(totals[1].cast_cpu_time_ns, 0);
  for (size_t i = 0; i < totals.size(); ++i) {
    EXPECT_EQ(totals[i].category, expected[i].category);
    EXPECT_EQ(totals[i].calls, expected[i].calls);
    EXPECT_EQ(totals[i].cpu_time_ns, expected[i].cpu_time_ns);
    EXPECT_EQ(totals[i].gpu_time_ns, expected[i].gpu_time_ns);
  }
}

TEST(StoreRoundTrip, UnattributedGpuTimeIsKernelsWithoutAnOp) {
  ScratchDir dir;
  const std::string path = dir / "run.ampscope";
  Fixture f = make_fixture();
  write_fixture_file(path, f);
  EXPECT_EQ(SessionReader::open(path).unattributed_gpu_ns(), 0);

  const std::string orphans = dir / "orphans.ampscope";
  for (auto& k : f.kernels)
    if (k.kind == ActivityKind::kMemcpy) k.op_id = 0;  // 4 x 50 us launched by no op
  write_fixture_file(orphans, f);
  const auto r = SessionReader::open(orphans);
  EXPECT_EQ(r.unattributed_gpu_ns(), 4 * 50'000);
  // The kernel_stats / kernel_ops aggregates are unaffected by the missing op.
  EXPECT_EQ(r.kernel_count(), 12);
}

// A time window finds kernels that started before it by the longest kernel's duration, read
// from the kernel table; where that table leaves the warm-up step out, its longest kernel
// (a 10 ms cuDNN benchmark trial, say) comes from the warm-up meta, or windows miss it.
TEST(StoreRoundTrip, AWindowFindsAWarmUpKernelTheKernelTableLeftOut) {
  ScratchDir dir;
  const auto write = [&](const std::string& path, bool with_meta) {
    auto w = SessionWriter::create(path, SessionMeta{});
    KernelRecord warm, steady;
    warm.name = "benchmark_trial";
    warm.op_id = 1;
    warm.step = 1;
    std::tie(warm.start_ns, warm.end_ns) = std::pair{1'000'000, 11'000'000};
    steady.name = "gemm";
    steady.op_id = 2;
    steady.step = 2;
    std::tie(steady.start_ns, steady.end_ns) = std::pair{20'000'000, 20'001'000};
    KernelAggregator table;  // the kernel table without step 1, as the capture writes it
    table.add(steady, "aten::mm");
    w->append_kernels({warm, steady});
    w->replace_kernel_stats(table.summaries(), table.launchers());
    WarmupLeftOut left_out;
    left_out.kernels_left_out = true;
    left_out.kernels = 1;
    left_out.kernel_gpu_ns = left_out.longest_kernel_ns = 10'000'000;
    if (with_meta) w->set_meta_value(meta_key::kWarmupLeftOut, warmup_meta_value(left_out));
    w->close();
  };
  write(dir / "warmup.ampscope", true);
  const auto r = SessionReader::open(dir / "warmup.ampscope");
  const auto window = r.kernels(5'000'000, 6'000'000);  // inside the trial, after its start
  ASSERT_EQ(window.size(), 1u);
  EXPECT_EQ(window[0].name, "benchmark_trial");
  int64_t seen = 0;
  r.for_each_kernel(5'000'000, 6'000'000, [&](const KernelRecord&) { ++seen; });
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(r.gpu_attribution().traced_ns, 1'000);  // the table's steps
  // Control: without what the meta says, the table's 1 us bound misses the trial.
  write(dir / "no_meta.ampscope", false);
  EXPECT_TRUE(SessionReader::open(dir / "no_meta.ampscope").kernels(5'000'000, 6'000'000).empty());
}

TEST(StoreRoundTrip, NanAndInfSurvive) {
  ScratchDir dir;
  const std::string path = dir / "run.ampscope";
  auto w = SessionWriter::create(path, SessionMeta{});
  StepRecord s;
  s.step = 7;
  s.loss = std::numeric_limits<double>::quiet_NaN();
  s.grad_norm = std::numeric_limits<double>::infinity();
  w->append_step(s);
  w->close();
  const auto steps = SessionReader::open(path).steps();
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_TRUE(std::isnan(steps[0].loss));
  EXPECT_EQ(steps[0].grad_norm, std::numeric_limits<double>::infinity());
}

TEST(StoreRoundTrip, ReplaceOpStatsAndMetaValuesReplace) {
  ScratchDir dir;
  const std::string path = dir / "run.ampscope";
  const Fixture f = make_fixture();
  auto w = SessionWriter::create(path, f.meta);
  w->replace_op_stats(std::vector<OpStats>(f.op_stats));
  w->set_meta_value("state", "running");
  w->replace_op_stats(std::vector<OpStats>(f.op_stats.begin(), f.op_stats.begin() + 1));
  w->set_meta_value("state", "finished");
  w->close();
  w->close();  // idempotent
  const auto r = SessionReader::open(path);
  EXPECT_EQ(r.op_stats().size(), 1u);
  EXPECT_EQ(r.meta_value("state"), "finished");
}

TEST(StoreRoundTrip, ExistingFileIsKeptUnlessOverwriteIsAsked) {
  ScratchDir dir;
  const std::string path = dir / "run.ampscope";
  write_file(path, "precious");
  try {
    SessionWriter::create(path, SessionMeta{});
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + path + "' already exists"), std::string::npos)
        << e.what();
  }
  // --force replaces a session, never a file of another kind (a script given to --out).
  try {
    SessionWriter::create(path, SessionMeta{}, /*overwrite=*/true);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("it is not a session file"), std::string::npos) << e.what();
  }
  std::ifstream kept(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "precious");
  SessionWriter::create(dir / "old.ampscope", SessionMeta{})->close();
  auto w = SessionWriter::create(dir / "old.ampscope", SessionMeta{}, /*overwrite=*/true);
  w->close();
  EXPECT_NO_THROW(SessionReader::open(dir / "old.ampscope"));
}

TEST(StoreRoundTrip, ALiveSessionIsNeverReplaced) {
  ScratchDir dir;
  const std::string path = dir / "live.ampscope";
  EXPECT_FALSE(is_live_session(path));
  auto live = SessionWriter::create(path, SessionMeta{});
  live->append_step(StepRecord{.step = 1});
  live->flush();
  EXPECT_TRUE(is_live_session(path));
  EXPECT_EQ(why_not_replaceable(path), "another ampscope run is writing it");
  try {
    SessionWriter::create(path, SessionMeta{}, /*overwrite=*/true);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("another ampscope run is writing it"), std::string::npos) << e.what();
  }
  live->append_step(StepRecord{.step = 2});
  live->close();
  EXPECT_FALSE(is_live_session(path));  // closing (or the process ending) releases it
  EXPECT_EQ(SessionReader::open(path).steps().size(), 2u);
}

// A reader that opens the file as soon as it exists (the GUI, following a script it started)
// learns who writes it from the first commit: whether the run still goes is known at once.
TEST(StoreRoundTrip, TheWritersPidAndHostAreInTheFirstCommit) {
  ScratchDir dir;
  const std::string path = dir / "new.ampscope";
  auto writer = SessionWriter::create(path, SessionMeta{});  // nothing appended, nothing flushed
  const SessionReader reader = SessionReader::open(path);
  EXPECT_EQ(reader.meta_value(meta_key::kPid), std::to_string(current_process_id()));
  EXPECT_EQ(reader.meta_value(meta_key::kHost), current_host_name());
  writer->close();
}

TEST(StoreRoundTrip, AValueOfTheWrongTypeIsAnErrorNamingTableAndColumn) {
  ScratchDir dir;
  const std::string path = dir / "run.ampscope";
  auto w = SessionWriter::create(path, SessionMeta{});
  w->append_step(StepRecord{.step = 1, .loss = 2.5});
  w->close();
  {
    store_detail::Db db(path, SQLITE_OPEN_READWRITE);
    db.exec("UPDATE steps SET loss='abc' WHERE step=1", "corrupting");
  }
  try {
    (void)SessionReader::open(path).steps();
    FAIL() << "a text loss read back without an error";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("steps.loss holds text where a number belongs"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ampscope::test
