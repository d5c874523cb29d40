// The item models and proxies behind the op and kernel tables, and the step
// series behind the live plots.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>

#include "profiler/report/html_report.h"
#include "profiler/report/report_data.h"
#include "tests/profiler_core/session_fixture.h"
#include "tests/support/test_support.h"
#include "tests/ui/qt_test_env.h"
#include "tests/ui/ui_test_data.h"
#include "ui/models/compiled_kernel_model.h"
#include "ui/models/findings_model.h"
#include "ui/models/formatting.h"
#include "ui/models/kernel_model.h"
#include "ui/models/model_roles.h"
#include "ui/models/op_stats_model.h"
#include "ui/models/readiness_model.h"
#include "ui/models/run_series.h"
#include "ui/models/table_filter_proxy.h"
#include "ui/widgets/category_strip.h"

namespace ampscope::ui {
namespace {

using profiler::OpCategory;
using testing::realisticKernels;
using testing::realisticOps;

constexpr auto kFatal = QAbstractItemModelTester::FailureReportingMode::Fatal;

QStringList column(const QAbstractItemModel& model, int col, int role = Qt::DisplayRole) {
  QStringList out;
  for (int r = 0; r < model.rowCount(); ++r) out << model.index(r, col).data(role).toString();
  return out;
}

TEST(OpStatsModel, PassesTheModelTesterThroughResetsAndUpdates) {
  OpStatsModel model;
  TableFilterProxy proxy;
  proxy.setSourceModel(&model);
  QAbstractItemModelTester model_tester(&model, kFatal);
  QAbstractItemModelTester proxy_tester(&proxy, kFatal);
  proxy.sort(OpStatsModel::kCpuTime, Qt::DescendingOrder);

  QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
  QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
  model.setRows(realisticOps());
  EXPECT_EQ(model.rowCount(), 11);
  EXPECT_EQ(resets.count(), 1);

  // The same ops with new times: an update in place, so selections survive.
  auto grown = realisticOps();
  for (auto& s : grown) s.cpu_time_ns *= 2, s.calls += 40;
  model.setRows(grown);
  EXPECT_EQ(resets.count(), 1);
  EXPECT_EQ(changes.count(), 1);
  EXPECT_EQ(model.index(0, OpStatsModel::kCalls).data().toString(), QStringLiteral("80"));

  // A new op appears: the rows change, so a reset.
  grown.push_back(testing::op("aten::gelu", "layers.1", profiler::Phase::kForward,
                              OpCategory::kUnchanged, {"bfloat16"}, {"bfloat16"}, 40, 100'000));
  model.setRows(grown);
  EXPECT_EQ(resets.count(), 2);
  EXPECT_EQ(proxy.rowCount(), 12);

  proxy.setCategoryFilter({static_cast<int>(OpCategory::kDemoted)});
  model.setRows(realisticOps());
  EXPECT_EQ(proxy.rowCount(), 3);
  model.clear();
  EXPECT_EQ(model.rowCount(), 0);
  EXPECT_EQ(proxy.rowCount(), 0);
}

TEST(OpStatsModel, ShowsDtypesTimesAndMixedPrecisionTerms) {
  OpStatsModel model;
  model.setRows(realisticOps());
  const auto cell = [&](int row, int col, int role = Qt::DisplayRole) {
    return model.index(row, col).data(role);
  };
  EXPECT_EQ(cell(0, OpStatsModel::kOp).toString(), QStringLiteral("aten::linear"));
  EXPECT_EQ(cell(0, OpStatsModel::kDtypes).toString(), QStringLiteral("fp32 → bf16"));
  EXPECT_EQ(cell(3, OpStatsModel::kDtypes).toString(), QStringLiteral("bf16 → fp32"));
  EXPECT_EQ(cell(5, OpStatsModel::kDtypes).toString(), QStringLiteral("bf16,fp32 → fp32"));
  EXPECT_EQ(cell(0, OpStatsModel::kCategory).toString(), QStringLiteral("demoted"));
  EXPECT_EQ(cell(0, OpStatsModel::kCpuTime).toString(), QStringLiteral("9.00 ms"));
  EXPECT_EQ(cell(2, OpStatsModel::kCpuTime).toString(), QStringLiteral("900.0 µs"));
  EXPECT_EQ(cell(0, OpStatsModel::kCpuTime, SortRole).toLongLong(), 9'000'000);
  EXPECT_EQ(cell(0, OpStatsModel::kTensorCoreShare).toString(), QStringLiteral("90 %"));
  EXPECT_EQ(cell(1, OpStatsModel::kCastTax).toString(), QStringLiteral("250.0 µs"));
  EXPECT_EQ(cell(0, OpStatsModel::kShapes).toString(), QStringLiteral("[64, 256] [256, 256]"));
  EXPECT_TRUE(cell(0, OpStatsModel::kCategory, Qt::ToolTipRole)
                  .toString()
                  .startsWith(QStringLiteral(
                      "demoted: autocast ran this op in fp16/bf16 although its inputs were fp32")));
  EXPECT_TRUE(cell(1, OpStatsModel::kCastTax, Qt::ToolTipRole)
                  .toString()
                  .contains(QStringLiteral("80 casts")));
  EXPECT_EQ(cell(0, OpStatsModel::kCategory, CategoryRole).toInt(),
            static_cast<int>(OpCategory::kDemoted));

  // A CPU-only run has no GPU time: a dash, and it sorts below every measured share.
  auto cpu_only = realisticOps();
  for (auto& s : cpu_only) s.gpu_time_ns = 0, s.tensor_core_gpu_time_ns = 0;
  model.setRows(cpu_only);
  EXPECT_EQ(cell(0, OpStatsModel::kGpuTime).toString(), QStringLiteral("—"));
  EXPECT_EQ(cell(0, OpStatsModel::kTensorCoreShare).toString(), QStringLiteral("—"));
  EXPECT_LT(cell(0, OpStatsModel::kTensorCoreShare, SortRole).toDouble(), 0.0);

  // A validation pass (no autograd) says so, apart from the training forward.
  model.setRows({testing::op("aten::linear", "layers.0", profiler::Phase::kForwardNoGrad, OpCategory::kDemoted,
                             {"float32", "float32"}, {"bfloat16"}, 4, 1'000)});
  EXPECT_EQ(cell(0, OpStatsModel::kPhase).toString(), QStringLiteral("forward (no grad)"));
  EXPECT_TRUE(cell(0, OpStatsModel::kPhase, Qt::ToolTipRole).toString().startsWith("A forward pass without autograd"));
}

TEST(TableFilterProxy, FiltersByCategoryAndTextAndSortsNumerically) {
  OpStatsModel model;
  model.setRows(realisticOps());
  TableFilterProxy proxy;
  proxy.setSourceModel(&model);
  QAbstractItemModelTester tester(&proxy, kFatal);

  // "9.00 ms" < "10.00 ms" < "900.0 µs" as text; the raw numbers order them right.
  proxy.setTextFilter(QStringLiteral("linear"));
  proxy.sort(OpStatsModel::kCpuTime, Qt::AscendingOrder);
  EXPECT_EQ(column(proxy, OpStatsModel::kModule),
            (QStringList{"blocks.0.attn.qkv", "layers.0", "layers.1"}));
  proxy.sort(OpStatsModel::kCpuTime, Qt::DescendingOrder);
  EXPECT_EQ(column(proxy, OpStatsModel::kCpuTime), (QStringList{"10.0 ms", "9.00 ms", "900.0 µs"}));

  // Every word must match, case-insensitively, in the op name or the module.
  proxy.setTextFilter(QStringLiteral("LINEAR layers."));
  EXPECT_EQ(proxy.rowCount(), 2);
  proxy.setTextFilter(QStringLiteral("blocks.0"));
  EXPECT_EQ(proxy.rowCount(), 4);
  proxy.setCategoryFilter({static_cast<int>(OpCategory::kKeptFp32)});
  EXPECT_EQ(column(proxy, OpStatsModel::kOp).size(), 2);
  for (const QString& c : column(proxy, OpStatsModel::kCategory))
    EXPECT_EQ(c, QStringLiteral("kept fp32"));
  proxy.setTextFilter({});
  proxy.setCategoryFilter(
      {static_cast<int>(OpCategory::kAutocastCast), static_cast<int>(OpCategory::kExplicitCast)});
  EXPECT_EQ(proxy.rowCount(), 2);
  proxy.setCategoryFilter({});
  EXPECT_EQ(proxy.rowCount(), 11);

  proxy.sort(OpStatsModel::kCalls, Qt::DescendingOrder);
  EXPECT_EQ(proxy.index(0, OpStatsModel::kCalls).data().toString(), QStringLiteral("120"));
  proxy.sort(OpStatsModel::kCalls, Qt::AscendingOrder);
  EXPECT_EQ(proxy.index(0, OpStatsModel::kCalls).data().toString(), QStringLiteral("1"));
}

TEST(TableFilterProxy, TopLevelOnlyHidesNestedOpsAndAutogradNodes) {
  std::vector<profiler::OpStats> rows = realisticOps();
  for (auto& r : rows) r.top_level = r.name != "aten::_to_copy" && r.name != "aten::relu";
  OpStatsModel model;
  model.setRows(rows);
  TableFilterProxy proxy;
  proxy.setSourceModel(&model);
  QAbstractItemModelTester tester(&proxy, kFatal);
  proxy.setTopLevelOnly(true);
  EXPECT_EQ(proxy.rowCount(), 9);
  EXPECT_FALSE(column(proxy, OpStatsModel::kOp).contains(QStringLiteral("aten::_to_copy")));
  proxy.setTopLevelOnly(false);
  EXPECT_EQ(proxy.rowCount(), 11);
  // Models without the role (kernels) are not filtered by it.
  KernelModel kernels;
  kernels.setRows(realisticKernels());
  TableFilterProxy kernel_proxy;
  kernel_proxy.setSourceModel(&kernels);
  kernel_proxy.setTopLevelOnly(true);
  EXPECT_EQ(kernel_proxy.rowCount(), kernels.rowCount());
}

TEST(KernelModel, PassesTheModelTesterAndSortsByTime) {
  KernelModel model;
  TableFilterProxy proxy;
  proxy.setSourceModel(&model);
  QAbstractItemModelTester model_tester(&model, kFatal);
  QAbstractItemModelTester proxy_tester(&proxy, kFatal);
  model.setRows(realisticKernels());
  ASSERT_EQ(model.rowCount(), 6);
  EXPECT_EQ(model.index(0, KernelModel::kTotal).data().toString(), QStringLiteral("9.00 ms"));
  EXPECT_EQ(model.index(0, KernelModel::kMean).data().toString(), QStringLiteral("75.0 µs"));
  EXPECT_EQ(model.index(0, KernelModel::kGrid).data().toString(), QStringLiteral("128×2×1"));
  EXPECT_EQ(model.index(0, KernelModel::kTensorCore).data().toString(), QStringLiteral("yes"));
  EXPECT_EQ(model.index(0, KernelModel::kShare).data().toString(), QStringLiteral("46.4 %"));

  proxy.sort(KernelModel::kTotal, Qt::AscendingOrder);
  EXPECT_EQ(proxy.index(0, KernelModel::kName).data().toString(), QStringLiteral("Memcpy HtoD"));
  proxy.sort(KernelModel::kCalls, Qt::DescendingOrder);
  EXPECT_EQ(proxy.index(0, KernelModel::kCalls).data().toString(), QStringLiteral("120"));

  proxy.setLaunchedByFilter(QStringLiteral("aten::linear"));
  EXPECT_EQ(proxy.rowCount(), 1);
  // A kernel launched by several ops belongs to each of them.
  auto shared = realisticKernels();
  shared[1].launching_ops = {"aten::mm", "aten::linear"};
  model.setRows(shared);
  EXPECT_EQ(proxy.rowCount(), 2);
  EXPECT_EQ(model.index(1, KernelModel::kLaunchedBy).data().toString(),
            QStringLiteral("aten::mm, aten::linear"));
  // Issue 31: a parent op's kernels are its children's (aten::linear runs aten::addmm's GEMM):
  // selecting it showed "0 kernel(s)" beside its 74 % Tensor Core time.
  auto nested = realisticKernels();
  nested[2].launching_ops = {"aten::addmm"};
  nested[2].enclosing_ops = {"aten::linear"};
  model.setRows(nested);
  EXPECT_EQ(proxy.rowCount(), 2);
  EXPECT_TRUE(model.index(2, KernelModel::kLaunchedBy).data(Qt::ToolTipRole).toString().contains(
      QStringLiteral("inside: aten::linear")));
  proxy.setLaunchedByFilter(QStringLiteral("aten::addmm"));
  EXPECT_EQ(proxy.rowCount(), 1) << "the child's own kernels only";
  model.setRows(realisticKernels());
  proxy.setLaunchedByFilter({});
  proxy.setTextFilter(QStringLiteral("elementwise"));
  EXPECT_EQ(proxy.rowCount(), 2);

  auto updated = realisticKernels();
  for (auto& k : updated) k.total_ns *= 3;
  QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
  model.setRows(updated);
  EXPECT_EQ(resets.count(), 0);
  updated.pop_back();
  model.setRows(updated);
  EXPECT_EQ(resets.count(), 1);
  model.clear();
  EXPECT_EQ(proxy.rowCount(), 0);
}

// Two layers over one sampled step: fc1 loses nothing worth noting; fc2's input
// flushes `flushed` of 1000 values in every format (40 dB all the same).
profiler::ReadinessTotals readinessOf(int64_t fc2_flushed, bool with_third_layer = false) {
  const auto tensor = [](profiler::TensorRole role, int64_t flushed) {
    profiler::TensorQuantization t{role, {}};
    for (profiler::QuantMetrics& m : t.formats) {
      m.elements = m.nonzero = 1000;
      m.flushed = flushed;
      m.signal = 1.0;
      m.noise = 1e-4;
    }
    return t;
  };
  profiler::ReadinessTotals totals;
  totals.add({2, "fc1", tensor(profiler::TensorRole::weight, 0)});
  totals.add({2, "fc1", tensor(profiler::TensorRole::input_activation, 0)});
  totals.add({2, "fc2", tensor(profiler::TensorRole::weight, 0)});
  totals.add({2, "fc2", tensor(profiler::TensorRole::input_activation, fc2_flushed)});
  if (with_third_layer) totals.add({2, "head", tensor(profiler::TensorRole::weight, 0)});
  return totals;
}

TEST(ReadinessModel, PassesTheModelTesterThroughResetsAndUpdates) {
  ReadinessModel model;
  QSortFilterProxyModel proxy;
  proxy.setSourceModel(&model);
  proxy.setSortRole(SortRole);
  QAbstractItemModelTester model_tester(&model, kFatal);
  QAbstractItemModelTester proxy_tester(&proxy, kFatal);
  proxy.sort(ReadinessModel::kLayer);
  QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
  QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
  model.setTotals(readinessOf(0));
  EXPECT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.columnCount(), 2 + profiler::kQuantFormatCount);
  model.setTotals(readinessOf(260));  // the same layers: values change in place
  EXPECT_EQ(resets.count(), 1);
  EXPECT_EQ(changes.count(), 1);
  model.setTotals(readinessOf(260, /*with_third_layer=*/true));
  EXPECT_EQ(resets.count(), 2);
  EXPECT_EQ(column(proxy, ReadinessModel::kLayer), (QStringList{"fc1", "fc2", "head"}));  // forward order
  model.clear();
  EXPECT_EQ(model.rowCount(), 0);
}

TEST(ReadinessModel, ACellIsItsVerdictColouredWithEveryTensorInTheTooltip) {
  ReadinessModel model;
  model.setTotals(readinessOf(260));  // 26% of fc2's input flushed: keep, in every format
  const int nvfp4 = ReadinessModel::kFirstFormat + static_cast<int>(profiler::QuantFormat::nvfp4);
  EXPECT_EQ(model.headerData(nvfp4, Qt::Horizontal).toString(), QStringLiteral("NVFP4 (e2m1, 16-blocks)"));
  EXPECT_TRUE(model.headerData(nvfp4, Qt::Horizontal, Qt::ToolTipRole).toString().startsWith("e2m1 (NVFP4): ready at"));
  EXPECT_EQ(model.index(0, ReadinessModel::kLowestReady).data().toString(), QStringLiteral("NVFP4"));
  EXPECT_EQ(model.index(0, nvfp4).data().toString(), QStringLiteral("ready · 40.0 dB"));
  EXPECT_EQ(model.index(0, nvfp4).data(VerdictRole).toInt(), static_cast<int>(profiler::Readiness::ready));
  EXPECT_EQ(model.index(1, ReadinessModel::kLowestReady).data().toString(), QStringLiteral("keep in bf16"));
  EXPECT_EQ(model.index(1, nvfp4).data().toString(), QStringLiteral("keep · 26% flushed (input)"));
  EXPECT_EQ(model.index(1, nvfp4).data(Qt::BackgroundRole).value<QColor>(), readinessColor(profiler::Readiness::keep));
  EXPECT_EQ(model.index(1, nvfp4).data(Qt::ToolTipRole).toString(),
            QStringLiteral("fc2, NVFP4 (e2m1, 16-blocks): keep in bf16\n"
                           "weight: SQNR 40.0 dB, 0% flushed, 0% saturated\n"
                           "input: SQNR 40.0 dB, 26% flushed, 0% saturated"));
  EXPECT_NE(readinessColor(profiler::Readiness::ready), readinessColor(profiler::Readiness::keep));
  EXPECT_FALSE(model.index(0, ReadinessModel::kLayer).data(VerdictRole).isValid());
}

TEST(FindingsModel, ARecommendationIsARowWithItsEvidenceUnderItAndItsDetailAsTooltip) {
  FindingsModel model;
  QAbstractItemModelTester model_tester(&model, kFatal);
  QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
  profiler::Recommendation warning{.id = "loss_scale_stuck_low", .severity = profiler::Severity::kWarning,
                                   .title = "The fp16 loss scale keeps backing off: gradients overflow",
                                   .detail = "The loss scale ended at 0.0625. Find the first op <inf>.",
                                   .evidence = {"step 60: 0.125 -> 0.0625 (skipped)",
                                                "step 57: 0.25 -> 0.125 (skipped)"}};
  profiler::Recommendation info{.id = "kept_fp32_share", .severity = profiler::Severity::kInfo,
                                .title = "30% of op time stays in fp32", .detail = "Autocast keeps...", .evidence = {}};
  model.setRecommendations({warning, info});
  EXPECT_EQ(resets.count(), 1);
  ASSERT_EQ(model.rowCount(), 2);
  const QModelIndex first = model.index(0, 0);
  EXPECT_EQ(first.data().toString(), QString::fromStdString(warning.title));
  EXPECT_EQ(first.data(FindingIdRole).toString(), QStringLiteral("loss_scale_stuck_low"));
  EXPECT_EQ(first.data(SeverityRole).toInt(), static_cast<int>(profiler::Severity::kWarning));
  EXPECT_EQ(first.data(DetailRole).toString(), QString::fromStdString(warning.detail));
  // The tooltip is rich text (Qt wraps it), the detail escaped in it.
  EXPECT_TRUE(first.data(Qt::ToolTipRole).toString().contains(QStringLiteral("first op &lt;inf&gt;")));
  EXPECT_EQ(first.data(Qt::DecorationRole).value<QColor>(), severityColor(profiler::Severity::kWarning));
  ASSERT_EQ(model.rowCount(first), 2);
  const QModelIndex line = model.index(1, 0, first);
  EXPECT_EQ(line.data().toString(), QStringLiteral("step 57: 0.25 -> 0.125 (skipped)"));
  EXPECT_EQ(line.parent(), first);
  EXPECT_EQ(line.data(DetailRole).toString(), QString::fromStdString(warning.detail));
  EXPECT_FALSE(line.data(Qt::DecorationRole).isValid());
  EXPECT_EQ(model.rowCount(line), 0);
  EXPECT_EQ(model.rowCount(model.index(1, 0)), 0);  // no evidence
  EXPECT_NE(severityColor(profiler::Severity::kWarning), severityColor(profiler::Severity::kInfo));
  model.setRecommendations({});
  EXPECT_EQ(model.rowCount(), 0);
}

TEST(CategoryTotals, SplitsTimeByCategoryAndPrecision) {
  const CategoryTotals t = summarizeByCategory(realisticOps());
  EXPECT_TRUE(t.gpu);
  int64_t sum = 0;
  for (int64_t v : t.time_ns) sum += v;
  EXPECT_EQ(sum, t.total_ns);
  // The strip's order (categoryAt), not the enum's.
  const auto time_of = [](const CategoryTotals& totals, OpCategory category) {
    for (int i = 0; i < kCategoryCount; ++i)
      if (categoryAt(i) == category) return totals.time_ns[i];
    ADD_FAILURE() << "no slot for category " << static_cast<int>(category);
    return int64_t{-1};
  };
  EXPECT_EQ(time_of(t, OpCategory::kDemoted), 9'300'000);  // the three linears' GPU time
  EXPECT_GT(time_of(t, OpCategory::kAutocastCast), 0);
  EXPECT_EQ(t.fp32_ns + t.fp16_ns + t.bf16_ns + t.other_ns, t.total_ns);
  EXPECT_EQ(t.fp16_ns, 10'000);
  EXPECT_FALSE(t.top_level_only);

  // With top-level rows marked, nested ops (the casts under a linear) are not counted twice.
  auto rows = realisticOps();
  for (auto& s : rows) s.top_level = s.category != OpCategory::kAutocastCast;
  const CategoryTotals top = summarizeByCategory(rows);
  EXPECT_TRUE(top.top_level_only);
  EXPECT_EQ(time_of(top, OpCategory::kAutocastCast), 0);
  EXPECT_EQ(top.total_ns, t.total_ns - 700'000);

  // By phase, the same rows' GPU time: on the strip's second line, as in the report's "Time by phase".
  int64_t phases = 0;
  for (const auto& [phase, ns] : top.phase_ns) phases += ns;
  EXPECT_EQ(phases, top.total_ns);
  CategoryStrip strip;
  strip.setTotals(top);
  EXPECT_TRUE(strip.summaryText().endsWith(
      QStringLiteral("\ncomputed in bf16 84 % · fp16 0 % · fp32 16 % — by phase: forward 54 % · backward 39 % · "
                     "optimizer 7 % · other 0 %")))
      << strip.summaryText().toStdString();
}

TEST(RunSeries, SmoothsTheLossAndCollectsSkippedSteps) {
  RunSeries series(0.9);
  for (int i = 1; i <= 50; ++i) {
    profiler::StepRecord r;
    r.step = i;
    r.loss = i == 20 ? std::numeric_limits<double>::quiet_NaN() : 2.0 / i;
    r.loss_scale = i < 10 ? 65536.0 : 32768.0;
    r.skipped = i == 9 || i == 20;
    r.step_time_ms = 10.0;
    r.mem_allocated_bytes = 64ll << 20;
    series.append(r);
  }
  EXPECT_EQ(series.size(), 50);
  EXPECT_DOUBLE_EQ(series.lossSmoothed().front(), 2.0);  // bias-corrected: starts at the first loss
  EXPECT_TRUE(std::isfinite(series.lossSmoothed().back()));  // the NaN at step 20 did not poison it
  EXPECT_GT(series.lossSmoothed()[30], series.loss()[30]);   // lags a falling loss
  EXPECT_EQ(series.skippedSteps(), (QVector<double>{9, 20}));
  EXPECT_EQ(series.skippedScales(), (QVector<double>{65536, 32768}));
  EXPECT_DOUBLE_EQ(series.memAllocatedMiB().front(), 64.0);
  EXPECT_DOUBLE_EQ(series.recentStepTimeMs(), 10.0);
  series.clear();
  EXPECT_TRUE(series.empty());
  EXPECT_EQ(series.skippedCount(), 0);
}

TEST(RunSeries, APartlySkippedStepNamesTheOptimizerThatSkipped) {
  // Two optimizers under one scaler: B skips at step 2, both at step 3, neither at 1.
  RunSeries series;
  std::vector<profiler::OptimizerStepRecord> per_optimizer;
  for (int step = 1; step <= 3; ++step) {
    profiler::StepRecord r;
    r.step = step;
    r.loss = 1.0;
    r.loss_scale = 1024.0 / step;
    r.skipped = step >= 2;
    series.append(r);
    for (int i = 0; i < 2; ++i) {
      profiler::OptimizerStepRecord o;
      o.step = step;
      o.optimizer = i;
      o.name = i == 0 ? "adamw (model A)" : "adamw (model B)";
      o.skipped = step == 3 || (step == 2 && i == 1);
      o.stepped = !o.skipped;
      per_optimizer.push_back(o);
    }
  }
  series.appendOptimizerSteps(per_optimizer);
  EXPECT_EQ(series.skippedSteps(), (QVector<double>{3}));
  EXPECT_EQ(series.partlySkippedSteps(), (QVector<double>{2}));
  EXPECT_EQ(series.partlySkippedScales(), (QVector<double>{512}));
  EXPECT_EQ(series.skippedOptimizers(2), QStringLiteral("adamw (model B)"));
  EXPECT_EQ(series.skippedOptimizers(3), QStringLiteral("adamw (model A), adamw (model B)"));
  EXPECT_TRUE(series.skippedOptimizers(1).isEmpty());
}

TEST(RunSeries, CollectsTheEvalLossOfValidatedStepsOnly) {
  RunSeries series;
  for (int i = 1; i <= 10; ++i) {
    profiler::StepRecord r;  // eval_loss NaN: no validation after the step
    r.step = i;
    r.loss = 1.0;
    if (i % 4 == 0) r.eval_loss = 0.1 * i;
    series.append(r);
  }
  EXPECT_EQ(series.evalSteps(), (QVector<double>{4, 8}));
  EXPECT_EQ(series.evalLoss(), (QVector<double>{0.4, 0.8}));
  EXPECT_EQ(series.loss().size(), 10);
  series.clear();
  EXPECT_TRUE(series.evalSteps().isEmpty());
}

TEST(Formatting, WritesUnitsAUserReads) {
  EXPECT_EQ(formatDuration(850), QStringLiteral("850 ns"));
  EXPECT_EQ(formatDuration(12'400), QStringLiteral("12.4 µs"));
  EXPECT_EQ(formatDuration(3'210'000), QStringLiteral("3.21 ms"));
  EXPECT_EQ(formatDuration(1'500'000'000), QStringLiteral("1.50 s"));
  EXPECT_EQ(formatBytes(512), QStringLiteral("512 B"));
  EXPECT_EQ(formatBytes(3 * 1024 * 1024 / 2), QStringLiteral("1.50 MiB"));
  EXPECT_EQ(shortDtype("bfloat16"), QStringLiteral("bf16"));
  EXPECT_EQ(dtypeFlow({"float32", "", "float32"}, {"float16"}), QStringLiteral("fp32 → fp16"));
  EXPECT_EQ(formatCount(12345), QStringLiteral("12.3k"));
}

// A compiled graph that ran on a GPU (issue 28): the kernels' GPU time is shown, and
// each kernel's share is of its graph's GPU time, not of the CPU time that launched it.
TEST(CompiledKernelModel, OnAGpuSharesAreOfTheGraphsGpuTimeAndTensorCoresAreCounted) {
  CompiledKernelModel model;
  QAbstractItemModelTester tester(&model, kFatal);
  profiler::CompiledKernelRow graph;
  graph.graph = 0;
  graph.kind = profiler::kCompiledGraphCall;
  graph.calls = 2;
  graph.cpu_time_ns = 1'000'000;
  graph.kernels = 6;
  graph.gpu_time_ns = 8'000'000;
  profiler::CompiledKernelRow triton = graph;
  triton.kind = profiler::kCompiledFusedKernel;
  triton.kernel = "triton_poi_fused_mm_0";
  triton.cpu_time_ns = 0;
  triton.kernels = 2;
  triton.gpu_time_ns = 2'000'000;
  profiler::CompiledKernelRow mm = triton;
  mm.kind = profiler::kCompiledExternKernel;
  mm.kernel = "aten::mm";
  mm.cpu_time_ns = 300'000;
  mm.tensor_core_kernels = 2;
  mm.gpu_time_ns = 6'000'000;
  model.setRows({graph, triton, mm});
  ASSERT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.index(0, CompiledKernelModel::kGraphShare).data().toString(), QStringLiteral("25.0 %"));
  EXPECT_EQ(model.index(1, CompiledKernelModel::kGraphShare).data().toString(), QStringLiteral("75.0 %"));
  EXPECT_EQ(model.index(1, CompiledKernelModel::kGpuTime).data().toString(), formatDuration(6'000'000));
  EXPECT_EQ(model.index(1, CompiledKernelModel::kGpuTime).data(Qt::ToolTipRole).toString(),
            QStringLiteral("2 GPU kernels, 2 on Tensor Cores"));
  EXPECT_EQ(model.index(1, CompiledKernelModel::kGpuTime).data(SortRole).toLongLong(), 6'000'000);

  // The same graph on the CPU: no GPU kernels, shares of CPU time.
  for (auto* r : {&graph, &triton, &mm}) r->kernels = r->tensor_core_kernels = r->gpu_time_ns = 0;
  model.setRows({graph, triton, mm});
  EXPECT_EQ(model.index(1, CompiledKernelModel::kGraphShare).data().toString(), QStringLiteral("30.0 %"));
  EXPECT_EQ(model.index(1, CompiledKernelModel::kGpuTime).data().toString(), QStringLiteral("—"));
}

// A category has one colour wherever the user meets it: the report's "Time by what autocast
// did" bars are the GUI's colours (they were the report's own palette by enum order, so
// "demoted" was green in the app and blue on the page).
TEST(CategoryColors, TheReportsCategoryBarsHaveTheGuisColours) {
  ampscope::test::ScratchDir dir;
  const auto session = (dir / "run.ampscope").string();
  ampscope::test::write_fixture_file(session, ampscope::test::make_fixture());
  profiler::ReportData data = profiler::load_report(session);
  data.category_totals.clear();
  for (int c = 0; c < profiler::kOpCategoryCount; ++c)
    data.category_totals.push_back({.category = static_cast<OpCategory>(c), .calls = 1, .cpu_time_ns = 1000 * (c + 1)});
  const std::string html = profiler::render_html(data);
  const size_t section = html.find("<h3>Time by what autocast did</h3>");
  ASSERT_NE(section, std::string::npos);
  const std::string chart = html.substr(html.find("<svg", section));
  for (int c = 0; c < profiler::kOpCategoryCount; ++c) {
    const auto category = static_cast<OpCategory>(c);
    const std::string label = ">" + std::string(profiler::to_string(category)) + "<title>";
    const size_t at = chart.find(label);
    ASSERT_NE(at, std::string::npos) << label;
    const size_t fill = chart.find("fill=\"", at);
    EXPECT_EQ(chart.substr(fill + 6, 7), categoryColor(category).name().toStdString()) << label;
  }
}

}  // namespace
}  // namespace ampscope::ui
