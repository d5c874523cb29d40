// The precision comparison in the GUI: the per-variant and per-op item models
// (under QAbstractItemModelTester, sorted and filtered through the proxy), and
// the comparison page running real fp32-vs-bf16 comparisons on the CPU: results
// fill in run by run, a stop keeps the finished runs on disk, impossible settings
// are messages, and the window opens comparison files onto the page.
// LibTorch-using headers first: Qt's keyword macros must not meet them.
#include "engine/trainer.h"
#include "profiler/compare/comparison_runner.h"
#include "profiler/report/findings.h"
#include "profiler/report/report_data.h"
#include "profiler/store/comparison_store.h"
#include "profiler/store/session_reader.h"
#include "tests/report/report_fixture.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_configs.h"
// Qt from here on.
#include <qcustomplot.h>

#include <QAbstractItemModelTester>
#include <QFile>
#include <QSignalSpy>
#include <fstream>

#include "tests/ui/qt_test_env.h"
#include "tests/ui/window_files.h"
#include "ui/models/findings_model.h"
#include "ui/models/formatting.h"
#include "ui/models/model_roles.h"
#include "ui/models/op_comparison_model.h"
#include "ui/models/store_session_io.h"
#include "ui/models/table_filter_proxy.h"
#include "ui/models/variant_summary_model.h"
#include "ui/widgets/comparison_page.h"
#include "ui/widgets/findings_pane.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/run_panel.h"
#include "ui/widgets/training_controller.h"

namespace ampscope::ui {
namespace {

using Kind = OpComparisonModel::ColumnKind;
using Tester = QAbstractItemModelTester;

QString cell(const QAbstractItemModel& m, int row, int column, int role = Qt::DisplayRole) {
  return m.data(m.index(row, column), role).toString();
}

int rowOf(const QAbstractItemModel& m, int column, const QString& text) {
  for (int r = 0; r < m.rowCount(); ++r)
    if (cell(m, r, column) == text) return r;
  return -1;
}

TEST(VariantSummaryModel, ShowsSpeedupsWithTheirSpreadAndSortsByRawNumbers) {
  const profiler::Comparison c = test::gpu_comparison();  // fp32, bf16 (1.9/2.4/2.6x), fp16
  VariantSummaryModel model;
  Tester tester(&model, Tester::FailureReportingMode::Fatal);
  TableFilterProxy proxy;
  proxy.setSourceModel(&model);
  Tester proxy_tester(&proxy, Tester::FailureReportingMode::Fatal);
  model.setComparison(c, profiler::summarize(c));

  ASSERT_EQ(model.rowCount(), 3);
  EXPECT_EQ(cell(model, 0, VariantSummaryModel::kVariant), "fp32");
  EXPECT_EQ(cell(model, 0, VariantSummaryModel::kSpeedup), "1.00× (baseline)");
  EXPECT_EQ(cell(model, 1, VariantSummaryModel::kSpeedup), "2.40× (1.90× – 2.60×)");
  EXPECT_EQ(cell(model, 1, VariantSummaryModel::kRepeats), "3 / 3");
  EXPECT_EQ(cell(model, 0, VariantSummaryModel::kMedianStep), "10.0 ms");
  EXPECT_EQ(cell(model, 2, VariantSummaryModel::kSkippedSteps), "1");
  EXPECT_EQ(cell(model, 0, VariantSummaryModel::kPeakMemory), "2.00 GiB");
  EXPECT_EQ(model.headerData(VariantSummaryModel::kPeakMemory, Qt::Horizontal).toString(), "Peak memory");
  EXPECT_EQ(cell(model, 1, VariantSummaryModel::kStatus), "done");
  // The variant's plot color is its decoration: the table is the loss plot's legend.
  EXPECT_EQ(model.data(model.index(1, 0), Qt::DecorationRole).value<QColor>(), variantColor("bf16"));

  proxy.sort(VariantSummaryModel::kSpeedup, Qt::DescendingOrder);
  EXPECT_EQ(cell(proxy, 0, 0), "bf16");  // 2.40x
  EXPECT_EQ(cell(proxy, 1, 0), "fp16");  // 2.30x
  EXPECT_EQ(cell(proxy, 2, 0), "fp32");
  proxy.sort(VariantSummaryModel::kMedianStep, Qt::AscendingOrder);
  EXPECT_EQ(cell(proxy, 2, 0), "fp32");  // 10 ms sorts above 4.17 ms as a number, not as text
  proxy.setTextFilter(QStringLiteral("fp16"));
  EXPECT_EQ(proxy.rowCount(), 1);

  // A comparison filling in keeps its rows (dataChanged, not a reset): the selection survives.
  QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
  model.setComparison(c, profiler::summarize(c));
  EXPECT_EQ(resets.count(), 0);
  model.clear();
  EXPECT_EQ(model.rowCount(), 0);
}

TEST(VariantSummaryModel, ACpuComparisonsMemoryColumnIsNamedTheResidentSet) {
  VariantSummaryModel model;
  Tester tester(&model, Tester::FailureReportingMode::Fatal);
  const profiler::Comparison gpu = test::gpu_comparison();
  model.setComparison(gpu, profiler::summarize(gpu));
  QSignalSpy headers(&model, &QAbstractItemModel::headerDataChanged);
  const profiler::Comparison cpu = test::cpu_comparison();  // the process's VmHWM, not tensors' bytes
  model.setComparison(cpu, profiler::summarize(cpu));
  EXPECT_EQ(headers.count(), 1);
  EXPECT_EQ(model.headerData(VariantSummaryModel::kPeakMemory, Qt::Horizontal).toString(), "Peak resident set");
  EXPECT_TRUE(model.data(model.index(0, VariantSummaryModel::kPeakMemory), Qt::ToolTipRole)
                  .toString()
                  .contains("resident set"));
}

TEST(VariantSummaryModel, AFailedOrDivergedVariantSaysSo) {
  profiler::Comparison c = test::gpu_comparison();
  c.variants[2].error = "the loss diverged at step 7 (NaN)";
  c.variants[2].repeats.resize(1);
  for (auto& step : c.variants[2].repeats[0]) step.loss = std::nan("");
  c.variants[1].repeats.clear();  // bf16: nothing finished yet
  VariantSummaryModel model;
  Tester tester(&model, Tester::FailureReportingMode::Fatal);
  model.setComparison(c, profiler::summarize(c));
  EXPECT_EQ(cell(model, 2, VariantSummaryModel::kStatus), "failed: the loss diverged at step 7 (NaN)");
  EXPECT_EQ(cell(model, 2, VariantSummaryModel::kFinalLoss), "diverged");
  EXPECT_TRUE(model.data(model.index(2, VariantSummaryModel::kStatus), Qt::ForegroundRole).isValid());
  EXPECT_EQ(cell(model, 1, VariantSummaryModel::kMedianStep), "—");
  EXPECT_EQ(cell(model, 1, VariantSummaryModel::kStatus), "waiting");
  // Missing values sort below every measured one.
  EXPECT_LT(model.data(model.index(1, VariantSummaryModel::kMedianStep), SortRole).toDouble(), 0.0);
}

TEST(OpComparisonModel, HasATimeColumnPerVariantAndASpeedupPerReducedPrecision) {
  const profiler::Comparison c = test::gpu_comparison();
  OpComparisonModel model;
  Tester tester(&model, Tester::FailureReportingMode::Fatal);
  TableFilterProxy proxy;
  proxy.setSourceModel(&model);
  Tester proxy_tester(&proxy, Tester::FailureReportingMode::Fatal);
  model.setComparison(c, profiler::match_ops(c));

  // Op, module, phase, shapes; 3 times; category, cast tax and speedup for bf16 and fp16.
  EXPECT_EQ(model.columnCount(), 4 + 3 + 2 * 3);
  EXPECT_EQ(model.findColumn(Kind::kSpeedup, QStringLiteral("fp32")), -1);
  const int bf16_speedup = model.findColumn(Kind::kSpeedup, QStringLiteral("bf16"));
  const int bf16_cast = model.findColumn(Kind::kCastTax, QStringLiteral("bf16"));
  const int bf16_category = model.findColumn(Kind::kCategory, QStringLiteral("bf16"));
  const int fp32_time = model.findColumn(Kind::kTime, QStringLiteral("fp32"));
  ASSERT_GE(bf16_speedup, 0);
  EXPECT_EQ(model.headerData(bf16_speedup, Qt::Horizontal).toString(), "bf16 speedup");

  const int linear = rowOf(model, 0, QStringLiteral("aten::linear"));
  ASSERT_GE(linear, 0);
  EXPECT_EQ(cell(model, linear, bf16_speedup), "3.00×");  // 60 ms vs 20 ms over 10 profiled steps
  EXPECT_EQ(cell(model, linear, fp32_time), "6.00 ms");   // per step
  EXPECT_EQ(cell(model, linear, bf16_cast), "200.0 µs");
  EXPECT_EQ(cell(model, linear, bf16_category), "demoted");
  const int softmax = rowOf(model, 0, QStringLiteral("aten::softmax"));
  EXPECT_EQ(cell(model, softmax, bf16_category), "kept fp32");

  proxy.sort(bf16_speedup, Qt::AscendingOrder);
  EXPECT_EQ(cell(proxy, 0, 0), "aten::softmax");  // 20/12 = 1.67x, the smallest gain
  proxy.setTextFilter(QStringLiteral("layer_norm"));
  EXPECT_EQ(proxy.rowCount(), 1);

  // Without fp32 there is nothing to divide by: no speedup columns.
  profiler::Comparison no_baseline = c;
  no_baseline.variants.erase(no_baseline.variants.begin());
  model.setComparison(no_baseline, profiler::match_ops(no_baseline));
  EXPECT_EQ(model.findColumn(Kind::kSpeedup, QStringLiteral("bf16")), -1);
  EXPECT_EQ(model.columnCount(), 4 + 2 + 2 * 2);
  model.clear();
  EXPECT_EQ(model.rowCount(), 0);
  EXPECT_EQ(model.columnCount(), 4);
}

TEST(OpComparisonModel, AnOpMissingFromAVariantShowsADashAndSortsLast) {
  profiler::Comparison c = test::gpu_comparison();
  c.variants[1].op_stats.pop_back();  // bf16 has no layer_norm row
  OpComparisonModel model;
  Tester tester(&model, Tester::FailureReportingMode::Fatal);
  model.setComparison(c, profiler::match_ops(c));
  const int row = rowOf(model, 0, QStringLiteral("aten::layer_norm"));
  const int bf16_time = model.findColumn(Kind::kTime, QStringLiteral("bf16"));
  const int bf16_speedup = model.findColumn(Kind::kSpeedup, QStringLiteral("bf16"));
  EXPECT_EQ(cell(model, row, bf16_time), "—");
  EXPECT_EQ(cell(model, row, bf16_speedup), "—");
  EXPECT_LT(model.data(model.index(row, bf16_speedup), SortRole).toDouble(), 0.0);
}

// A page whose Run panel is a tiny GPT on the CPU.
struct PageFixture {
  explicit PageFixture(int64_t steps) {
    page.setBaseConfigSource([steps] { return test::tiny_gpt(engine::Precision::kFP32, steps); });
    page.setVariants({QStringLiteral("fp32"), QStringLiteral("bf16")});
    page.setRepeats(2);
    page.setWarmupSteps(2);
    page.setProfiledSteps(2);
    page.setOutputPath(QString::fromStdString((dir / "c.ampscope").string()));
    QObject::connect(&page, &ComparisonPage::errorOccurred, [this](const QString&, const QString& message) {
      errors << message;
    });
    page.resize(1200, 800);
    page.show();
  }
  bool waitDone() {
    return testing::waitUntil([this] { return !page.isRunning(); }, std::chrono::seconds(180));
  }
  test::ScratchDir dir;
  ComparisonPage page;
  QStringList errors;
};

TEST(ComparisonPage, RunsARealComparisonAndFillsInRunByRun) {
  PageFixture f(6);
  int partial_results = 0;
  QObject::connect(f.page.controller(), &ComparisonController::resultsChanged,
                   [&](const ComparisonResultsPtr& r) { partial_results += r->complete ? 0 : 1; });
  QSignalSpy running(&f.page, &ComparisonPage::runningChanged);
  QSignalSpy written(&f.page, &ComparisonPage::comparisonWritten);
  ASSERT_TRUE(f.page.startComparison()) << f.errors.join(';').toStdString();
  EXPECT_TRUE(f.page.isRunning());
  ASSERT_TRUE(f.waitDone());
  ASSERT_TRUE(f.errors.isEmpty()) << f.errors.join(';').toStdString();

  // 2 variants x 2 repeats + 2 profiled passes, each reported when it ended.
  EXPECT_EQ(partial_results, 6);
  ASSERT_EQ(running.count(), 2);
  EXPECT_TRUE(running.at(0).at(0).toBool());
  EXPECT_FALSE(running.at(1).at(0).toBool());
  ASSERT_EQ(written.count(), 1);
  const VariantSummaryModel& summary = *f.page.summaryModel();
  ASSERT_EQ(summary.rowCount(), 2);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(summary.summary(r).finished_repeats, 2);
    EXPECT_EQ(summary.summary(r).measured_steps, 2 * 4);  // warm-up excluded
  }
  EXPECT_GT(summary.summary(1).speedup.median, 0.0);
  EXPECT_GT(f.page.opModel()->rowCount(), 5);  // real op tables matched across fp32 and bf16
  const int bf16_category = f.page.opModel()->findColumn(Kind::kCategory, QStringLiteral("bf16"));
  bool demoted = false;
  for (int r = 0; r < f.page.opModel()->rowCount(); ++r)
    demoted |= cell(*f.page.opModel(), r, bf16_category) == "demoted";
  EXPECT_TRUE(demoted) << "autocast demoted no op of the tiny GPT to bf16";
  EXPECT_EQ(f.page.lossPlot()->graphCount(), 4);  // every repeat of both variants
  EXPECT_EQ(f.page.lossPlot()->graph(0)->dataCount(), 6);
  // As differences to fp32 (same step, same repeat): bf16's two repeats, small but not all zero.
  f.page.setLossDifference(true);
  ASSERT_EQ(f.page.lossPlot()->graphCount(), 2);
  double largest = 0.0;
  for (const auto& point : *f.page.lossPlot()->graph(0)->data()) largest = std::max(largest, std::abs(point.value));
  EXPECT_GT(largest, 0.0);
  EXPECT_LT(largest, 0.1);
  f.page.setLossDifference(false);
  EXPECT_FALSE(f.page.verdictText().isEmpty());
  EXPECT_TRUE(f.page.progressText().startsWith("Finished")) << f.page.progressText().toStdString();

  // What the page shows is what the file holds.
  const profiler::Comparison on_disk = profiler::read_comparison(f.page.comparisonPath().toStdString());
  ASSERT_EQ(on_disk.variants.size(), 2u);
  EXPECT_EQ(on_disk.variants[1].repeats.size(), 2u);
  EXPECT_EQ(on_disk.variants[1].repeats[1].back().loss,
            f.page.results()->report.comparison->variants[1].repeats[1].back().loss);
}

// The GUI's `compare --inference`: the page's switch runs forward batches per precision
// (no scaler, no profiled pass) and shows them as batches; the file says inference.
TEST(ComparisonPage, TheInferenceSwitchRunsAnInferenceComparison) {
  PageFixture f(5);
  f.page.setVariants({QStringLiteral("fp32"), QStringLiteral("fp16")});
  f.page.setInference(true);
  const auto o = f.page.options();
  EXPECT_TRUE(o.inference);
  EXPECT_EQ(o.profile_steps, 0);
  QStringList lines;
  QObject::connect(f.page.controller(), &ComparisonController::progress,
                   [&](const ComparisonProgressInfo&) { lines << f.page.progressText(); });
  ASSERT_TRUE(f.page.startComparison()) << f.errors.join(';').toStdString();
  ASSERT_TRUE(f.waitDone());
  ASSERT_TRUE(f.errors.isEmpty()) << f.errors.join(';').toStdString();
  // The controller coalesces progress, so which batches show varies; that they are batches does not.
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const QString& l) { return l.contains(QStringLiteral("batch")) && l.contains(" / 5 · loss"); }))
      << lines.join('\n').toStdString();

  const profiler::Comparison on_disk = profiler::read_comparison(f.page.comparisonPath().toStdString());
  EXPECT_TRUE(on_disk.inference);
  ASSERT_EQ(on_disk.variants.size(), 2u);
  EXPECT_FALSE(on_disk.variants[1].scaler);  // fp16 inference: nothing to scale
  EXPECT_EQ(on_disk.variants[1].profiled_steps, 0);
  EXPECT_EQ(on_disk.variants[1].repeats.size(), 2u);
  EXPECT_EQ(on_disk.variants[1].repeats[0].size(), 5u);
  EXPECT_EQ(f.page.summaryModel()->headerData(VariantSummaryModel::kMedianStep, Qt::Horizontal).toString(),
            QStringLiteral("Median batch"));
  EXPECT_EQ(f.page.summaryModel()->summary(1).measured_steps, 2 * 3);  // 2 repeats, 2 warm-up batches out

  // Switched back, the next comparison trains again.
  f.page.setInference(false);
  f.page.setOutputPath(QString::fromStdString((f.dir / "next.ampscope").string()));
  EXPECT_FALSE(f.page.options().inference);
  EXPECT_EQ(f.page.options().profile_steps, 2);
}

TEST(ComparisonPage, AStopKeepsTheFinishedRunsAndANewComparisonStartsClean) {
  PageFixture f(150);
  bool stop_sent = false;
  QObject::connect(f.page.controller(), &ComparisonController::resultsChanged, [&](const ComparisonResultsPtr&) {
    if (!stop_sent) f.page.stopComparison();  // after the first finished run
    stop_sent = true;
  });
  ASSERT_TRUE(f.page.startComparison());
  ASSERT_TRUE(f.waitDone());
  ASSERT_TRUE(stop_sent);
  EXPECT_TRUE(f.page.progressText().startsWith("Stopped")) << f.page.progressText().toStdString();
  const std::string path = (f.dir / "c.ampscope").string();
  const profiler::Comparison kept = profiler::read_comparison(path);
  EXPECT_EQ(kept.variants[0].repeats.size(), 1u);  // fp32 #1 finished; bf16 #1 was cut short
  EXPECT_EQ(kept.variants[0].repeats[0].size(), 150u);
  EXPECT_TRUE(kept.variants[1].repeats.empty());
  EXPECT_EQ(profiler::SessionReader::open(path).meta_value("final_state"), "stopped");
  EXPECT_EQ(f.page.summaryModel()->summary(0).finished_repeats, 1);

  // The file exists now, so the same settings are refused rather than overwriting it...
  EXPECT_FALSE(f.page.startComparison());
  ASSERT_EQ(f.errors.size(), 1);
  EXPECT_TRUE(f.errors[0].contains("exists")) << f.errors[0].toStdString();
  // ...and a new file starts a comparison of its own, with nothing of the stopped one in it.
  f.page.setBaseConfigSource([] { return test::tiny_gpt(engine::Precision::kFP32, 4); });
  f.page.setRepeats(1);
  f.page.setProfiledSteps(0);
  f.page.setOutputPath(QString::fromStdString((f.dir / "second.ampscope").string()));
  ASSERT_TRUE(f.page.startComparison()) << f.errors.join(';').toStdString();
  ASSERT_TRUE(f.waitDone());
  EXPECT_EQ(f.page.summaryModel()->summary(0).finished_repeats, 1);
  EXPECT_EQ(f.page.results()->report.comparison->variants[0].repeats[0].size(), 4u);
  EXPECT_EQ(f.page.lossPlot()->graphCount(), 2);
}

TEST(ComparisonPage, ImpossibleSettingsAreMessagesAndWriteNothing) {
  PageFixture f(6);
  f.page.setVariants({QStringLiteral("fp32"), QStringLiteral("tf32")});
  EXPECT_FALSE(f.page.startComparison());
  ASSERT_EQ(f.errors.size(), 1);
  EXPECT_TRUE(f.errors[0].contains("tf32 needs a CUDA device")) << f.errors[0].toStdString();
  f.page.setVariants({QStringLiteral("fp32")});
  f.page.setWarmupSteps(6);
  EXPECT_FALSE(f.page.startComparison());
  ASSERT_EQ(f.errors.size(), 2);
  EXPECT_TRUE(f.errors[1].contains("--warmup (6) must be less than --steps (6)")) << f.errors[1].toStdString();
  EXPECT_FALSE(f.page.isRunning());
  EXPECT_FALSE(std::filesystem::exists(f.dir / "c.ampscope"));
  // No precision chosen: the Run button is off.
  f.page.setVariants({});
  auto* run = f.page.findChild<QPushButton*>(QStringLiteral("runButton"));
  ASSERT_NE(run, nullptr);
  EXPECT_FALSE(run->isEnabled());
}

TEST(ComparisonWindow, OpensComparisonFilesOntoThePageAndReportsThem) {
  test::ScratchDir dir;
  profiler::ComparisonOptions o;
  o.base = test::tiny_gpt(engine::Precision::kFP32, 5);
  o.variants = {"fp32", "bf16"};
  o.repeats = 1;
  o.warmup_steps = 1;
  o.profile_steps = 1;
  o.out_path = (dir / "cli.ampscope").string();
  profiler::ComparisonRunner(o).run();

  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(o.out_path))) << window.bannerText().toStdString();
  EXPECT_TRUE(window.comparisonPageShown());
  EXPECT_EQ(window.comparisonPage()->summaryModel()->rowCount(), 2);
  EXPECT_EQ(window.comparisonPage()->lossPlot()->graphCount(), 2);
  // Its settings come along: the page's precisions and the run panel's model and steps.
  EXPECT_EQ(window.comparisonPage()->variants(), (QStringList{"fp32", "bf16"}));
  EXPECT_EQ(window.runPanel()->config().model.kind, engine::ModelKind::kGPT);
  EXPECT_EQ(window.runPanel()->config().steps, 5);
  // The Findings pane: the comparison's verdict and its bf16 pass's recommendations, as its report has them.
  const profiler::SessionFindings expected = profiler::comparison_findings(profiler::load_report(o.out_path));
  ASSERT_TRUE(window.findingsPane()->showsFindings());
  QStringList verdict;
  for (const std::string& sentence : expected.verdict) verdict << QString::fromStdString(sentence);
  EXPECT_FALSE(verdict.isEmpty());
  EXPECT_EQ(window.findingsPane()->verdictText(), verdict.join(QLatin1Char('\n')));
  ASSERT_EQ(window.findingsPane()->model()->rowCount(), static_cast<int>(expected.recommendations.size()));
  for (int r = 0; r < window.findingsPane()->model()->rowCount(); ++r)
    EXPECT_TRUE(window.findingsPane()->model()->index(r, 0).data().toString().startsWith(QStringLiteral("bf16: ")));

  const std::string report = (dir / "r.html").string();
  ASSERT_TRUE(testing::exportReportAndWait(window, QString::fromStdString(report))) << window.bannerText().toStdString();
  std::ifstream in(report);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("Precision variants"), std::string::npos);

  // A corrupt file is a message in the window, and the page keeps what it showed.
  const std::string corrupt = (dir / "corrupt.ampscope").string();
  std::ofstream(corrupt) << "not a database";
  EXPECT_FALSE(testing::openAndWait(window, QString::fromStdString(corrupt)));
  EXPECT_FALSE(window.bannerText().isEmpty());
  EXPECT_EQ(window.comparisonPage()->summaryModel()->rowCount(), 2);
}

// A comparison the window runs fills the Findings pane as each of its runs ends ("so far"), and
// its end leaves the findings of the whole comparison, as its file's report has them.
TEST(ComparisonWindow, AComparisonsFindingsFillInAsItsRunsEndAndAreWholeAtItsEnd) {
  test::ScratchDir dir;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.runPanel()->setConfig(test::tiny_gpt(engine::Precision::kFP32, 5));
  window.show();
  ComparisonPage* page = window.comparisonPage();
  page->setVariants({QStringLiteral("fp32"), QStringLiteral("bf16")});
  page->setRepeats(1);
  page->setWarmupSteps(1);
  page->setProfiledSteps(1);
  const std::string path = (dir / "c.ampscope").string();
  page->setOutputPath(QString::fromStdString(path));
  const FindingsPane* pane = window.findingsPane();
  // As each run's results are shown (the pane is filled before this, connected after it).
  int partial = 0, partial_shown = 0;
  QObject::connect(page->controller(), &ComparisonController::resultsChanged, [&](const ComparisonResultsPtr& r) {
    if (r->complete) return;
    ++partial;
    QStringList verdict;
    for (const std::string& sentence : profiler::comparison_findings(r->report).verdict)
      verdict << QString::fromStdString(sentence);
    partial_shown += pane->showsFindings() && pane->soFarText().startsWith(QStringLiteral("So far: the comparison")) &&
                     pane->verdictText() == verdict.join(QLatin1Char('\n'));
  });
  ASSERT_TRUE(page->startComparison()) << window.bannerText().toStdString();
  EXPECT_FALSE(pane->showsFindings());  // a note: they come as the runs end
  ASSERT_TRUE(testing::waitUntil([&] { return !page->isRunning(); }, std::chrono::seconds(180)));
  EXPECT_EQ(partial, 4);  // fp32 and bf16 timed, then profiled
  EXPECT_EQ(partial_shown, partial);

  const profiler::SessionFindings expected = profiler::comparison_findings(profiler::load_report(path));
  ASSERT_TRUE(pane->showsFindings());
  EXPECT_EQ(pane->soFarText(), QString());
  QStringList verdict;
  for (const std::string& sentence : expected.verdict) verdict << QString::fromStdString(sentence);
  EXPECT_FALSE(verdict.isEmpty());
  EXPECT_EQ(pane->verdictText(), verdict.join(QLatin1Char('\n')));
  EXPECT_EQ(pane->model()->rowCount(), static_cast<int>(expected.recommendations.size()));
}

// An inference comparison (compare --inference) opens as one: its table says batches,
// not steps, and the training file opened after it says steps again.
TEST(ComparisonWindow, AnInferenceComparisonSaysBatches) {
  test::ScratchDir dir;
  profiler::ComparisonOptions o;
  o.base = test::tiny_gpt(engine::Precision::kFP32, 5);
  o.variants = {"fp32", "bf16"};
  o.repeats = 1;
  o.warmup_steps = 1;
  o.inference = true;
  o.out_path = (dir / "inference.ampscope").string();
  profiler::ComparisonRunner(o).run();

  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(o.out_path))) << window.bannerText().toStdString();
  EXPECT_TRUE(window.comparisonPage()->inference());  // "Run comparison" would repeat it as it was
  const VariantSummaryModel& summary = *window.comparisonPage()->summaryModel();
  EXPECT_EQ(summary.rowCount(), 2);
  EXPECT_EQ(summary.headerData(VariantSummaryModel::kMedianStep, Qt::Horizontal).toString(),
            QStringLiteral("Median batch"));
  EXPECT_EQ(summary.summary(0).finished_repeats, 1);
  EXPECT_EQ(summary.summary(0).measured_steps, 4);

  o.inference = false;
  o.profile_steps = 0;
  o.out_path = (dir / "training.ampscope").string();
  profiler::ComparisonRunner(o).run();
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(o.out_path))) << window.bannerText().toStdString();
  EXPECT_EQ(summary.headerData(VariantSummaryModel::kMedianStep, Qt::Horizontal).toString(),
            QStringLiteral("Median step"));
  EXPECT_FALSE(window.comparisonPage()->inference());
}

TEST(ComparisonWindow, TrainingAndAComparisonNeverRunTogetherAndClosingStopsIt) {
  test::ScratchDir dir;
  auto window = std::make_unique<MainWindow>(MainWindow::Options{.restore_layout = false});
  window->runPanel()->setConfig(test::tiny_gpt(engine::Precision::kFP32, 2000));
  window->show();
  ComparisonPage* page = window->comparisonPage();
  page->setOutputPath(QString::fromStdString((dir / "c.ampscope").string()));
  page->setRepeats(1);
  page->setWarmupSteps(2);
  ASSERT_TRUE(page->startComparison()) << window->bannerText().toStdString();
  ASSERT_TRUE(testing::waitUntil([&] { return page->isRunning(); }));
  EXPECT_FALSE(window->startAction()->isEnabled());
  window->startRun();
  EXPECT_TRUE(window->bannerText().contains("comparison is running")) << window->bannerText().toStdString();
  EXPECT_FALSE(window->controller()->isActive());

  // Closing the window mid-comparison stops it after the step in progress; the file stays readable.
  testing::spinFor(std::chrono::milliseconds(300));
  window->close();
  EXPECT_FALSE(page->isRunning());
  window.reset();
  EXPECT_EQ(profiler::SessionReader::open((dir / "c.ampscope").string()).meta_value("final_state"), "stopped");
}

}  // namespace
}  // namespace ampscope::ui
