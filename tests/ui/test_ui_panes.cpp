// Panes on their own, without a run: the gradients heatmap over time and the run
// panel's profiling options.
// The cases name only the fields they set; the rest keep their defaults, as C++20's
// aggregate initialization guarantees. GCC 12 warns about it all the same.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

// LibTorch before Qt: Qt's `slots` macro breaks LibTorch's headers.
#include "profiler/capture/profiler.h"

#include <qcustomplot.h>

#include <QLabel>
#include <QTableView>
#include <QComboBox>
#include <QCheckBox>
#include <QSpinBox>
#include <QDoubleSpinBox>
#include <QTest>
#include <cmath>

#include "tests/ui/qt_test_env.h"
#include "tests/ui/ui_test_data.h"
#include "profiler/analysis/loss_scale_window.h"
#include "profiler/number_text.h"
#include "ui/models/readiness_model.h"
#include "ui/widgets/color_scheme.h"
#include "ui/widgets/comparison_page.h"
#include "ui/widgets/compiled_pane.h"
#include "ui/widgets/gradients_pane.h"
#include "ui/widgets/kernel_view.h"
#include "ui/models/run_series.h"
#include "ui/widgets/live_plots.h"
#include "ui/widgets/readiness_pane.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/op_explorer.h"
#include "ui/widgets/plot_fitting.h"
#include "ui/widgets/run_panel.h"
#include "ui/widgets/run_status_bar.h"
#include "ui/widgets/training_controller.h"

namespace ampscope::ui {
namespace {

using Mode = GradientsPane::HeatmapMode;
using profiler::kGradBins;
using profiler::kGradLog2Min;
using testing::gradientSample;

// Five sampled steps of three parameters; the scale halves at step 30 (an overflow).
profiler::ProfileSnapshotPtr snapshotWithHistory() {
  auto snapshot = std::make_shared<profiler::ProfileSnapshot>();
  const int64_t steps[] = {10, 20, 30, 40, 50};
  for (int64_t step : steps) {
    const double scale = step < 30 ? 65536.0 : 32768.0;
    const int drift = static_cast<int>(step / 10);
    snapshot->gradient_history.push_back(gradientSample("a.weight", -20 - drift, 4, scale, step));
    snapshot->gradient_history.push_back(gradientSample("a.bias", -14, 2, scale, step));
    snapshot->gradient_history.push_back(gradientSample("b.weight", -28 + drift, 6, scale, step));
  }
  for (const auto& s : snapshot->gradient_history)
    if (s.step == 50) snapshot->latest_gradients.push_back(s);
  snapshot->step = 50;
  return snapshot;
}

std::array<int64_t, kGradBins> summed(const profiler::ProfileSnapshot& snapshot, int64_t step,
                                      const std::string& parameter = {}) {
  std::array<int64_t, kGradBins> sum{};
  for (const auto& s : snapshot.gradient_history)
    if (s.step == step && (parameter.empty() || s.parameter == parameter))
      for (int b = 0; b < kGradBins; ++b) sum[b] += s.log2_histogram[b];
  return sum;
}

TEST(GradientsPane, OverTimeHasOneColumnPerSampledStepWithTheSummedHistograms) {
  GradientsPane pane;
  pane.resize(900, 600);
  pane.show();
  const auto snapshot = snapshotWithHistory();
  pane.setSnapshot(snapshot);
  ASSERT_EQ(pane.heatmapMode(), Mode::kLatest);
  EXPECT_EQ(pane.heatmapMap()->data()->keySize(), kGradBins);
  EXPECT_EQ(pane.heatmapMap()->data()->valueSize(), 3);  // one row per parameter

  pane.setHeatmapMode(Mode::kOverTimeAll);
  const GradientHistoryMap& map = pane.historyMap();
  ASSERT_EQ(map.steps, (std::vector<int64_t>{10, 20, 30, 40, 50}));
  QCPColorMapData* data = pane.heatmapMap()->data();
  ASSERT_EQ(data->keySize(), 5);
  ASSERT_EQ(data->valueSize(), kGradBins);
  for (int c = 0; c < 5; ++c) {
    const auto expected = summed(*snapshot, map.steps[static_cast<size_t>(c)]);
    EXPECT_EQ(map.counts[static_cast<size_t>(c)], expected) << "column " << c;
    int64_t total = 0;
    for (int64_t n : expected) total += n;
    for (int b = 0; b < kGradBins; ++b) {
      const double cell = data->cell(c, b);
      if (expected[b] == 0)
        EXPECT_TRUE(std::isnan(cell)) << c << "," << b;
      else
        EXPECT_NEAR(cell, std::max(0.02, static_cast<double>(expected[b]) / total), 1e-12);
    }
  }
  // The fp16 limits follow each step's scale; the last column is at the current one.
  EXPECT_EQ(map.loss_scales.front(), 65536.0);
  EXPECT_EQ(map.loss_scales.back(), 32768.0);
  const QCPGraph* floor = pane.heatmapPlot()->graph(0);
  ASSERT_TRUE(floor->visible());
  EXPECT_DOUBLE_EQ((floor->data()->constEnd() - 1)->value, -24.0 - 15.0);
  EXPECT_DOUBLE_EQ(floor->data()->constBegin()->value, -24.0 - 16.0);

  pane.selectParameter(1);  // a.bias
  pane.setHeatmapMode(Mode::kOverTimeSelected);
  ASSERT_EQ(pane.historyMap().counts.size(), 5u);
  for (size_t c = 0; c < 5; ++c)
    EXPECT_EQ(pane.historyMap().counts[c], summed(*snapshot, map.steps[c], "a.bias"));
  pane.selectParameter(2);  // the heatmap follows the selection
  EXPECT_EQ(pane.historyMap().counts[0], summed(*snapshot, 10, "b.weight"));

  pane.setHeatmapMode(Mode::kLatest);
  EXPECT_EQ(pane.heatmapMap()->data()->keySize(), kGradBins);
  EXPECT_EQ(pane.heatmapMap()->data()->valueSize(), 3);
  EXPECT_FALSE(pane.heatmapPlot()->graph(0)->visible());
}

TEST(GradientsPane, OverTimeWithoutHistoryShowsTheLatestSampleAsOneColumn) {
  GradientsPane pane;
  pane.setHeatmapMode(Mode::kOverTimeAll);
  pane.setSnapshot(testing::realisticSnapshot(7));
  ASSERT_EQ(pane.historyMap().steps, std::vector<int64_t>{7});
  EXPECT_EQ(pane.heatmapMap()->data()->keySize(), 1);
}

TEST(GradientsPane, FormatComboMovesTheLimitsAndTheTextNamesEveryFormat) {
  GradientsPane pane;
  pane.resize(900, 600);
  pane.show();
  pane.setHeatmapMode(Mode::kOverTimeAll);
  pane.setSnapshot(snapshotWithHistory());
  ASSERT_EQ(pane.shownFormat(), profiler::FloatFormat::fp16);
  // At the last step's scale 2^15: fp16's floor 2^-24 sits at 2^-39, fp8 e4m3's 2^-9 at 2^-24.
  EXPECT_DOUBLE_EQ((pane.heatmapPlot()->graph(0)->data()->constEnd() - 1)->value, -24.0 - 15.0);
  EXPECT_DOUBLE_EQ((pane.heatmapPlot()->graph(2)->data()->constEnd() - 1)->value, std::log2(65504.0) - 15.0);
  pane.setShownFormat(profiler::FloatFormat::fp8_e4m3fn);
  EXPECT_DOUBLE_EQ((pane.heatmapPlot()->graph(0)->data()->constEnd() - 1)->value, -9.0 - 15.0);
  EXPECT_DOUBLE_EQ((pane.heatmapPlot()->graph(1)->data()->constEnd() - 1)->value, -6.0 - 15.0);
  EXPECT_DOUBLE_EQ((pane.heatmapPlot()->graph(2)->data()->constEnd() - 1)->value, std::log2(448.0) - 15.0);
  EXPECT_TRUE(pane.heatmapPlot()->toolTip().contains(QStringLiteral("fp8 e4m3 max 448")))
      << pane.heatmapPlot()->toolTip().toStdString();
  const QString text = pane.fractionsText();
  EXPECT_TRUE(text.contains(QStringLiteral("underflow (→ 0 in fp8 e4m3) 50.0 %"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("overflow (→ NaN)"))) << text.toStdString();  // e4m3 has no inf
  EXPECT_TRUE(text.contains(QStringLiteral("fp8 e5m2: → 0 7.0 % · subnormal 12.5 %"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("fp16: → 0 3.1 %"))) << text.toStdString();
  // Written beside the histogram, not over its bars.
  const auto* fractions = pane.findChild<QLabel*>(QStringLiteral("gradientFractions"));
  ASSERT_NE(fractions, nullptr);
  EXPECT_EQ(fractions->text(), text);
  EXPECT_TRUE(fractions->isVisible());
  for (int i = 0; i < pane.histogramPlot()->itemCount(); ++i)
    EXPECT_EQ(qobject_cast<QCPItemText*>(pane.histogramPlot()->item(i)), nullptr);
}

// The plots show nonzero |g| only; the scale line gives the latest sample's exact zeros
// (under fp16 autocast the backward's flushed values): at a collapsed loss scale every
// gradient was zero, the plots were empty and nothing said why.
TEST(GradientsPane, TheScaleLineGivesTheShareOfExactZeros) {
  GradientsPane pane;
  auto snapshot = std::make_shared<profiler::ProfileSnapshot>(*snapshotWithHistory());
  // a.weight's 4 elements and b.weight's 6 half zero, a.bias's 2 none: 5 of 12.
  for (auto& g : snapshot->latest_gradients) g.zero_fraction = g.parameter == "a.bias" ? 0.0 : 0.5;
  pane.setSnapshot(snapshot);
  const auto* line = pane.findChild<QLabel*>(QStringLiteral("gradientScaleLine"));
  ASSERT_NE(line, nullptr);
  const double share = (0.5 * static_cast<double>(snapshot->latest_gradients[0].numel) +
                        0.5 * static_cast<double>(snapshot->latest_gradients[2].numel)) /
                       static_cast<double>(snapshot->latest_gradients[0].numel + snapshot->latest_gradients[1].numel +
                                           snapshot->latest_gradients[2].numel);
  const QString zero_share = QStringLiteral(" · %1 % of elements exactly 0 at step 50").arg(100 * share, 0, 'f', 1);
  EXPECT_TRUE(line->text().endsWith(zero_share))
      << line->text().toStdString();
  pane.setHeatmapMode(Mode::kOverTimeAll);
  EXPECT_TRUE(line->text().contains(QStringLiteral("of elements exactly 0 at step 50"))) << line->text().toStdString();
  // A bf16 run is told which fp16 loss scales would carry its gradients, in summary's words;
  // an fp16 run is not (its backward already flushed the small ones).
  const auto window = profiler::loss_scale_window(snapshot->latest_gradients);
  ASSERT_TRUE(window);
  std::string sentence = profiler::loss_scale_window_text(*window);
  sentence[0] = 'T';
  pane.setRunPrecision(QStringLiteral("bf16"));
  EXPECT_TRUE(line->text().contains(QStringLiteral("exactly 0 at step 50\n") + QString::fromStdString(sentence)))
      << line->text().toStdString();
  pane.setRunPrecision(QStringLiteral("fp16"));
  EXPECT_FALSE(line->text().contains(QStringLiteral("loss scales"))) << line->text().toStdString();
  auto zeros = std::make_shared<profiler::ProfileSnapshot>(*snapshot);
  for (auto& g : zeros->latest_gradients) g.zero_fraction = 1.0;
  pane.setSnapshot(zeros);
  EXPECT_TRUE(line->text().endsWith(QStringLiteral(" · every gradient element at step 50 is exactly 0")))
      << line->text().toStdString();
}

// Replots until the plot's fitting labels were made for its current size (a resize
// queues one more replot; processing events delivers the resize itself).
void settle(QCustomPlot* plot) {
  for (int i = 0; i < 3; ++i) {
    QCoreApplication::processEvents();
    plot->replot(QCustomPlot::rpImmediateRefresh);
  }
}

// The latest sample's heatmap has a row per parameter: in a short dock their names were
// drawn over each other. Only as many are written as fit apart, and all where there is room.
TEST(GradientsPane, WithoutSamplesItSaysWhyAndStillShowsTheBackwardChecks) {
  GradientsPane pane;
  const auto* hint = pane.findChild<QLabel*>(QStringLiteral("paneHint"));
  ASSERT_NE(hint, nullptr);
  EXPECT_TRUE(hint->text().contains(QStringLiteral("once the profiler is attached"))) << hint->text().toStdString();
  // A recorded 8-step run sampled every 10 steps: no range sample, one backward check.
  auto snapshot = std::make_shared<profiler::ProfileSnapshot>();
  snapshot->step = 8;
  snapshot->range_sampling = "every 10 steps (within the 5 % budget)";
  profiler::BackwardCheck check{.step = 4, .skipped = true, .gradients = 9, .nonfinite = 1, .module = "2.bias",
                                .side = profiler::GradientSide::kParameter};
  snapshot->backward_inf = profiler::summarize_backward_checks({check});
  pane.setSnapshot(snapshot);
  const std::string text = hint->text().toStdString();
  EXPECT_NE(text.find("No gradient range sample by step 8: range samples every 10 steps (within the 5 % budget)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Backward: the first non-finite gradient in backward was parameter 2.bias's gradient"),
            std::string::npos)
      << text;
  EXPECT_TRUE(hint->isVisibleTo(&pane));
  pane.setSnapshot(nullptr);
  EXPECT_TRUE(hint->text().contains(QStringLiteral("once the profiler is attached")));
}

// A torch.compile'd model's sampled step: its model and a block compiled in place were
// measured around their compiled calls; the modules inside the graphs run no hooks. "No
// module output overflowed fp16" covers the measured ones only, and the pane says which
// modules it cannot cover: those with compiled forward ops and no sample, once each.
TEST(GradientsPane, ActivationsNameTheModulesInsideCompiledGraphsAsUnmeasured) {
  auto snapshot = std::make_shared<profiler::ProfileSnapshot>();
  snapshot->step = 3;
  snapshot->latest_gradients.push_back(gradientSample("blocks.0.up.weight", -20, 4, 1.0, 3));
  for (const std::string module : {"blocks.0", "Net"})
    snapshot->latest_activations.push_back({.step = 3, .module = module, .dtype = "float32", .numel = 512,
                                            .max_abs = 318.6});
  auto op = [](std::string name, std::string module, profiler::Phase phase, bool compiled) {
    profiler::OpStats row;
    row.name = std::move(name);
    row.module = std::move(module);
    row.phase = phase;
    row.compiled = compiled;
    row.calls = 3;
    return row;
  };
  using profiler::Phase;
  snapshot->op_stats = {op("aten::native_layer_norm", "blocks.0.norm", Phase::kForward, true),
                        op("aten::addmm", "blocks.0.up", Phase::kForward, true),
                        op("aten::addmm", "blocks.0.up", Phase::kForward, true),      // a second row: named once
                        op("aten::add", "blocks.0", Phase::kForward, true),           // measured outside the graph
                        op("aten::addmm", "head", Phase::kForward, false),            // eager: its hook ran
                        op("aten::mm", "blocks.1.up", Phase::kBackward, true),        // no forward in a graph
                        op("aten::addmm", "val.up", Phase::kForwardNoGrad, true),     // validation: never sampled
                        op("aten::add", "", Phase::kForward, true)};                  // in no module
  GradientsPane pane;
  pane.setSnapshot(snapshot);
  const std::string text = pane.activationText().toStdString();
  EXPECT_NE(text.find("no module output overflowed fp16 (2 modules at step 3)"), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with("\nThe outputs of 2 modules inside torch.compile'd graphs are not measured (compiled "
                             "code runs no module hooks): blocks.0.norm, blocks.0.up"))
      << text;
  for (const char* other : {"head", "blocks.1.up", "val.up"})
    EXPECT_EQ(text.find(other), std::string::npos) << other << " in: " << text;

  // Without activation samples nothing was measured, so nothing is said to be missing.
  snapshot->latest_activations.clear();
  pane.setSnapshot(snapshot);
  EXPECT_EQ(pane.activationText().toStdString().find("not measured"), std::string::npos);
}

// Every module compiled in place ran eagerly: the pane says no graph was read and which
// modules ran eagerly, not "0 graphs" with their ops and kernel times to look for.
TEST(CompiledPane, WhereNothingCompiledItSaysNoGraphWasReadAndWhatRanEagerly) {
  profiler::CompileEvents compile;
  compile.ran_eagerly = {{.module = "encoder.layers.0", .class_name = "TransformerEncoderLayer"}};
  CompiledPane pane;
  pane.setCompileEvents(compile);
  EXPECT_TRUE(pane.showsContent());
  EXPECT_EQ(pane.summary(), QStringLiteral("No AOTAutograd graph read."));
  EXPECT_TRUE(pane.events().startsWith(QStringLiteral("1 module compiled in place ran eagerly")))
      << pane.events().toStdString();

  compile.graphs = 1;
  pane.setCompileEvents(compile);
  EXPECT_TRUE(pane.summary().startsWith(QStringLiteral("1 AOTAutograd graph read (forward and backward); their ops")))
      << pane.summary().toStdString();
  EXPECT_TRUE(pane.summary().contains(QStringLiteral("No kernel times"))) << pane.summary().toStdString();
}

TEST(PlotFitting, ParameterNamesAreWrittenApartWhateverTheHeatmapsHeight) {
  auto snapshot = std::make_shared<profiler::ProfileSnapshot>();
  snapshot->step = 7;
  for (int i = 0; i < 40; ++i)
    snapshot->latest_gradients.push_back(gradientSample("blocks." + std::to_string(i) + ".weight", -20, 4, 1.0, 7));
  GradientsPane pane;
  pane.resize(900, 320);
  pane.show();
  pane.setSnapshot(snapshot);
  QCustomPlot* heatmap = pane.heatmapPlot();
  settle(heatmap);
  const QCPAxis* names = heatmap->yAxis;
  const int label_height = QFontMetrics(names->tickLabelFont()).height();
  QVector<QString> written = writtenTickLabels(names);
  ASSERT_GT(written.size(), 1);
  EXPECT_LT(written.size(), 40);
  EXPECT_EQ(written.front(), QStringLiteral("blocks.0.weight"));
  const QVector<double> ticks = names->tickVector();
  for (qsizetype i = 1; i < ticks.size(); ++i)
    EXPECT_GE(std::abs(names->coordToPixel(ticks[i]) - names->coordToPixel(ticks[i - 1])), label_height)
        << written[i].toStdString();

  // The selected parameter's histogram below it, as short: its counts are written apart too.
  QCustomPlot* histogram = pane.histogramPlot();
  settle(histogram);
  const QCPAxis* counts = histogram->yAxis;
  ASSERT_LT(counts->axisRect()->height(), 5 * 2 * label_height) << "the pane leaves the histogram room for 5 labels";
  const QVector<double> count_ticks = counts->tickVector();
  ASSERT_GE(count_ticks.size(), 1);
  for (qsizetype i = 1; i < count_ticks.size(); ++i)
    EXPECT_GE(std::abs(counts->coordToPixel(count_ticks[i]) - counts->coordToPixel(count_ticks[i - 1])),
              label_height);

  pane.resize(900, 2400);  // room for every name
  ASSERT_TRUE(testing::waitUntil([&] { return heatmap->height() > 1000; }));
  settle(heatmap);
  written = writtenTickLabels(names);
  EXPECT_EQ(written.size(), 40);
  EXPECT_EQ(written.back(), QStringLiteral("blocks.39.weight"));
}

// What the step times include was one line, cut off at both ends of a narrow plot.
TEST(PlotFitting, ANoteIsWrappedToTheWidthOfItsPlot) {
  LivePlots plots;
  plots.resize(900, 700);
  plots.show();
  const QString note = QStringLiteral(
      "median step 1.30 ms; every step was profiled, so this includes capture; 4 gradient-sampled steps "
      "5.19 ms (a sample adds 2.98 steps)");
  plots.setStepTimingNote(note);
  QCustomPlot* plot = plots.graph(LivePlots::kStepTime, 0)->parentPlot();
  settle(plot);
  EXPECT_EQ(plots.stepTimingNote(), note);
  const QCPItemText* item = nullptr;
  for (int i = 0; i < plot->itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)); text && plotNoteText(text) == note) item = text;
  ASSERT_NE(item, nullptr);
  const QStringList lines = item->text().split(QLatin1Char('\n'));
  EXPECT_GT(lines.size(), 1) << item->text().toStdString();
  EXPECT_EQ(lines.join(QLatin1Char(' ')), note);  // nothing lost, only broken
  const QFontMetrics metrics(item->font());
  for (const QString& line : lines) EXPECT_LE(metrics.horizontalAdvance(line), plot->axisRect()->width());

  // In a plot too short for all of it, the note keeps to the top 40 % and ends elided.
  plots.resize(560, 340);
  ASSERT_TRUE(testing::waitUntil([&] { return plot->height() < 160; })) << plot->height();
  settle(plot);
  const QStringList kept = item->text().split(QLatin1Char('\n'));
  EXPECT_LE(kept.size() * metrics.lineSpacing(), plot->axisRect()->height() * 2 / 5 + metrics.lineSpacing());
  EXPECT_TRUE(kept.back().endsWith(QChar(0x2026))) << item->text().toStdString();
  EXPECT_EQ(plots.stepTimingNote(), note);

  plots.setStepTimingNote(QString());
  EXPECT_EQ(plots.stepTimingNote(), QString());
}

// A torch.compile'd run's first step compiles (15 s on the CPU for an MLP whose steps take
// 3 ms): on a scale that holds it, the other steps lay flat on the axis. It is left off
// the scale and named; a run whose steps are all alike, slow or fast, keeps them all.
TEST(LivePlots, AFirstStepThatCompiledIsLeftOffTheStepTimeScaleAndNamed) {
  RunSeries series;
  const std::vector<double> step_ms{15'021.0, 3.1, 2.9, 3.0, 3.4, 2.8};
  for (size_t i = 0; i < step_ms.size(); ++i) {
    profiler::StepRecord r;
    r.step = static_cast<int64_t>(i + 1);
    r.loss = 1.0;
    r.step_time_ms = step_ms[i];
    series.append(r);
  }
  LivePlots plots;
  plots.resize(900, 700);
  plots.setSeries(&series);
  plots.appendSteps(0);
  const QCPAxis* axis = plots.plot(LivePlots::kStepTime)->yAxis;
  EXPECT_LT(axis->range().upper, 10.0) << "steps 2-6 fill the plot";
  EXPECT_GE(axis->range().upper, 3.4) << "every other step is on it";
  EXPECT_EQ(plots.offScaleNote(), QStringLiteral("off the scale: step 1 (15.02 s)"));

  RunSeries steady;
  for (int i = 1; i <= 6; ++i) {
    profiler::StepRecord r;
    r.step = i;
    r.loss = 1.0;
    r.step_time_ms = 1'000.0 + 100.0 * i;  // slow steps, none an outlier
    steady.append(r);
  }
  plots.setSeries(&steady);
  plots.appendSteps(0);
  EXPECT_GE(axis->range().upper, 1'600.0);
  EXPECT_EQ(plots.offScaleNote(), QString());
}

// The note on what the step times include was drawn over the step-time line: the axis leaves
// the note's share of the plot above the data.
TEST(LivePlots, NoLineRunsThroughTheStepTimeNote) {
  RunSeries series;
  for (int i = 1; i <= 20; ++i) {
    profiler::StepRecord r;
    r.step = i;
    r.loss = 1.0;
    r.step_time_ms = i % 5 == 0 ? 5.0 : 2.0;  // sampled steps highest
    series.append(r);
  }
  LivePlots plots;
  plots.resize(900, 700);
  plots.show();
  plots.setSeries(&series);
  plots.appendSteps(0);
  QCustomPlot* plot = plots.plot(LivePlots::kStepTime);
  settle(plot);
  const double bare_top = plot->yAxis->range().upper;
  plots.setStepTimingNote(QStringLiteral("median step 2.20 ms; every step was profiled, so this includes capture; "
                                         "1 gradient-sampled step 4.67 ms (a sample adds 1.12 steps)"));
  settle(plot);
  const QCPItemText* note = nullptr;
  for (int i = 0; i < plot->itemCount(); ++i) {
    auto* text = qobject_cast<QCPItemText*>(plot->item(i));
    if (text && text->visible() && text->text().contains(QStringLiteral("median"))) note = text;
  }
  ASSERT_NE(note, nullptr);
  const double note_bottom = note->bottom->pixelPosition().y();
  const double highest = plot->yAxis->coordToPixel(5.0);  // pixels grow downwards
  EXPECT_GT(highest, note_bottom) << "the highest step is drawn under the note";
  EXPECT_GT(plot->yAxis->range().upper, bare_top);
  // Without the note the data has the plot's height again.
  plots.setStepTimingNote(QString());
  EXPECT_DOUBLE_EQ(plot->yAxis->range().upper, bare_top);
}

// Made narrower, the window wraps the note to more lines:
// the headroom follows without new data, so the highest step is still drawn below the note.
TEST(LivePlots, AResizedWindowKeepsTheDataBelowTheStepTimeNote) {
  RunSeries series;
  for (int i = 1; i <= 20; ++i) {
    profiler::StepRecord r;
    r.step = i;
    r.loss = 1.0;
    r.step_time_ms = i % 5 == 0 ? 5.0 : 2.0;
    series.append(r);
  }
  LivePlots plots;
  plots.resize(1400, 900);
  plots.show();
  plots.setSeries(&series);
  plots.appendSteps(0);
  plots.setStepTimingNote(QStringLiteral("median step 2.20 ms; every step was profiled, so this includes capture; "
                                         "1 gradient-sampled step 4.67 ms (a sample adds 1.12 steps)"));
  QCustomPlot* plot = plots.plot(LivePlots::kStepTime);
  settle(plot);
  const QCPItemText* note = nullptr;
  for (int i = 0; i < plot->itemCount(); ++i) {
    auto* text = qobject_cast<QCPItemText*>(plot->item(i));
    if (text && text->visible() && text->text().contains(QStringLiteral("median"))) note = text;
  }
  ASSERT_NE(note, nullptr);
  const int wide_lines = static_cast<int>(note->text().count(QLatin1Char('\n'))) + 1;
  const double wide_top = plot->yAxis->range().upper;
  plots.resize(560, 900);
  settle(plot);
  ASSERT_GT(note->text().count(QLatin1Char('\n')) + 1, wide_lines) << "the narrower plot wraps the note further";
  EXPECT_GT(plot->yAxis->range().upper, wide_top);
  EXPECT_GT(plot->yAxis->coordToPixel(5.0), note->bottom->pixelPosition().y()) << "the highest step under the note";
}

TEST(PlotFitting, WrapsAtSpacesAndKeepsItsOwnLineBreaks) {
  const QFontMetrics metrics(QApplication::font());
  const int word = metrics.horizontalAdvance(QStringLiteral("aaaa"));
  EXPECT_EQ(wrapToWidth(QStringLiteral("aaaa bbbb cccc"), metrics, word * 2), QStringLiteral("aaaa\nbbbb\ncccc"));
  EXPECT_EQ(wrapToWidth(QStringLiteral("aaaa bbbb\ncc"), metrics, word * 10), QStringLiteral("aaaa bbbb\ncc"));
  EXPECT_EQ(wrapToWidth(QStringLiteral("averyveryverylongword x"), metrics, word),
            QStringLiteral("averyveryverylongword\nx"));  // too wide alone: its own line, whole
}

TEST(GradientHistoryMap, SumsPerStepInStepOrder) {
  const std::vector<profiler::GradientSample> history = {gradientSample("x", -10, 0, 2.0, 8),
                                                         gradientSample("x", -10, 0, 2.0, 4),
                                                         gradientSample("y", -10, 0, 2.0, 4)};
  const auto map = gradientHistoryMap(history);
  ASSERT_EQ(map.steps, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(map.counts[0][-10 - kGradLog2Min], 2000);
  EXPECT_EQ(map.counts[1][-10 - kGradLog2Min], 1000);
  EXPECT_EQ(gradientHistoryMap(history, "y").counts[1][-10 - kGradLog2Min], 0);
}

TEST(RunPanel, TheRecipeComboReachesTheConfigAndBack) {
  RunPanel panel;
  auto* recipe = panel.findChild<QComboBox*>(QStringLiteral("recipeCombo"));
  ASSERT_NE(recipe, nullptr);
  EXPECT_EQ(panel.config().recipe, engine::RecipeKind::kStandard);
  recipe->setCurrentIndex(recipe->findData(static_cast<int>(engine::RecipeKind::kMultiLoss)));
  EXPECT_EQ(panel.config().recipe, engine::RecipeKind::kMultiLoss);
  engine::TrainConfig saved = panel.config();
  saved.recipe = engine::RecipeKind::kCustomFunction;
  panel.setConfig(saved);  // a session's saved settings, opened again
  EXPECT_EQ(panel.config().recipe, engine::RecipeKind::kCustomFunction);
}

TEST(RunPanel, ProfilingFieldsReachTheProfilerOptions) {
  RunPanel panel;
  // The GUI starts from the defaults every entry point has (issue 31: it sampled
  // gradients every 5 steps where the CLI and Python took 10).
  const profiler::CaptureSettings profiler_defaults = profiler::ProfilerOptions{}.capture;
  EXPECT_EQ(panel.captureSettings(), profiler_defaults);
  EXPECT_EQ(panel.captureSettings().gradient_every, 10);
  EXPECT_TRUE(panel.captureSettings().trace_gpu);

  auto field = [&](const char* name) {
    auto* box = panel.findChild<QSpinBox*>(QString::fromLatin1(name));
    EXPECT_NE(box, nullptr) << name;
    EXPECT_TRUE(box->isEnabled()) << name;
    return box;
  };
  field("profileEveryNSteps")->setValue(3);
  field("profileWindowStart")->setValue(100);
  field("profileWindowSteps")->setValue(50);
  field("profileSampleBudget")->setValue(0);
  field("profileReadinessEvery")->setValue(2);
  field("profileGradientEvery")->setValue(0);
  EXPECT_EQ(field("profileGradientEvery")->text(), QStringLiteral("off"));
  // (disabled now, with gradients off: its own test below)
  EXPECT_EQ(panel.findChild<QSpinBox*>(QStringLiteral("profileSampleBudget"))->text(),
            QStringLiteral("off: every K steps"));
  auto* trace_gpu = panel.findChild<QCheckBox*>(QStringLiteral("profileTraceGpu"));
  ASSERT_NE(trace_gpu, nullptr);
  ASSERT_TRUE(trace_gpu->isEnabled());
  trace_gpu->setChecked(false);

  EXPECT_EQ(panel.captureSettings(), (profiler::CaptureSettings{.window_start = 100, .window_steps = 50,
                                                                .every_n_steps = 3, .gradient_every = 0,
                                                                .sample_budget_percent = 0, .readiness_every = 2,
                                                                .trace_gpu = false}));

  panel.setCaptureSettings(profiler::CaptureSettings{});
  EXPECT_EQ(field("profileEveryNSteps")->value(), profiler_defaults.every_n_steps);
  EXPECT_EQ(field("profileWindowSteps")->text(), QStringLiteral("to the end"));
  EXPECT_EQ(field("profileReadinessEvery")->value(), profiler_defaults.readiness_every);
  EXPECT_TRUE(trace_gpu->isChecked());
  EXPECT_EQ(panel.captureSettings(), profiler_defaults);
}

// Kernel tracing is CUDA's: with the CPU chosen its switch cannot be set, and it
// keeps its state for when a GPU is chosen again.
TEST(RunPanel, KernelTracingIsOnlyOfferedOffTheCpu) {
  RunPanel panel;
  auto* trace_gpu = panel.findChild<QCheckBox*>(QStringLiteral("profileTraceGpu"));
  ASSERT_NE(trace_gpu, nullptr);
  trace_gpu->setChecked(false);
  engine::TrainConfig c = panel.config();
  for (const auto device : {engine::DeviceChoice::kCPU, engine::DeviceChoice::kCUDA, engine::DeviceChoice::kAuto}) {
    c.device = device;
    panel.setConfig(c);
    EXPECT_EQ(trace_gpu->isEnabled(), device != engine::DeviceChoice::kCPU) << engine::to_string(device);
    EXPECT_FALSE(panel.captureSettings().trace_gpu);
  }
}

// A session's loss-scaler settings and learning rate read back as recorded. The panel's
// spin boxes rounded to fixed decimals: a session run with --init-scale 1e-4 opened with an
// initial scale of 1, a backoff of 0.125 read 0.13, a learning rate of 1.5e-7 read 0.
TEST(RunPanel, ScalerSettingsAndLearningRateReadBackAsRecorded) {
  RunPanel panel;
  engine::TrainConfig recorded = panel.config();
  recorded.precision = engine::Precision::kFP16;  // the scaler's fields take input
  recorded.scaler.init_scale = 1e-4;
  recorded.scaler.backoff_factor = 0.125;
  recorded.scaler.growth_factor = 1.5;
  recorded.optim.lr = 1.5e-7;
  panel.setConfig(recorded);
  EXPECT_EQ(panel.config().scaler.init_scale, 1e-4);
  EXPECT_EQ(panel.config().scaler.backoff_factor, 0.125);
  EXPECT_EQ(panel.config().scaler.growth_factor, 1.5);
  EXPECT_EQ(panel.config().optim.lr, 1.5e-7);
  auto* scale = panel.findChild<QDoubleSpinBox*>(QStringLiteral("initScale"));
  auto* lr = panel.findChild<QDoubleSpinBox*>(QStringLiteral("learningRate"));
  ASSERT_TRUE(scale && lr);
  EXPECT_EQ(scale->text(), QStringLiteral("0.0001"));
  EXPECT_EQ(lr->text(), QStringLiteral("1.5e-07"));
  // Large scales whole, not rounded to six digits: 2^30 and 2^24.
  recorded.scaler.init_scale = 1073741824.0;
  panel.setConfig(recorded);
  EXPECT_EQ(scale->text(), QStringLiteral("1073741824"));
  EXPECT_EQ(panel.config().scaler.init_scale, 1073741824.0);
  // The arrows double and halve a scale: it moves by powers of two, as GradScaler moves it.
  scale->setValue(65536);
  scale->stepUp();
  EXPECT_EQ(panel.config().scaler.init_scale, 131072.0);
  scale->stepBy(-2);
  EXPECT_EQ(panel.config().scaler.init_scale, 32768.0);
  // Typed in any notation the CLI takes.
  scale->selectAll();
  QTest::keyClicks(scale, QStringLiteral("1e-6"));
  EXPECT_EQ(scale->text(), QStringLiteral("1e-6"));
  QTest::keyClick(scale, Qt::Key_Return);
  EXPECT_EQ(panel.config().scaler.init_scale, 1e-6);
  // Not positive: the last good value stays (a sign or letter is not even taken).
  scale->selectAll();
  QTest::keyClicks(scale, QStringLiteral("-x0"));
  EXPECT_EQ(scale->text(), QStringLiteral("0"));
  QTest::keyClick(scale, Qt::Key_Return);
  EXPECT_EQ(panel.config().scaler.init_scale, 1e-6);
  EXPECT_EQ(scale->text(), QStringLiteral("1e-06"));
}

// The sample budget and the readiness cadence act on gradient samples: with those
// off, their fields cannot be set, and they come back with them.
TEST(RunPanel, SampleBudgetAndReadinessFollowTheGradientSamples) {
  RunPanel panel;
  auto* gradients = panel.findChild<QSpinBox*>(QStringLiteral("profileGradientEvery"));
  auto* budget = panel.findChild<QSpinBox*>(QStringLiteral("profileSampleBudget"));
  auto* readiness = panel.findChild<QSpinBox*>(QStringLiteral("profileReadinessEvery"));
  ASSERT_TRUE(gradients && budget && readiness);
  EXPECT_TRUE(budget->isEnabled());
  EXPECT_TRUE(readiness->isEnabled());
  gradients->setValue(0);
  EXPECT_FALSE(budget->isEnabled());
  EXPECT_FALSE(readiness->isEnabled());
  profiler::CaptureSettings sampled;
  sampled.gradient_every = 3;
  panel.setCaptureSettings(sampled);
  EXPECT_TRUE(budget->isEnabled());
  EXPECT_TRUE(readiness->isEnabled());
  EXPECT_EQ(readiness->text(), QStringLiteral("1 sample in %1").arg(profiler::kReadinessEveryOption.default_value));
  readiness->setValue(0);
  EXPECT_EQ(readiness->text(), QStringLiteral("off"));
}

}  // namespace
}  // namespace ampscope::ui

namespace ampscope::ui {
namespace {

// `--color-scheme dark`: every plot follows the palette (backgrounds, axis text,
// legends) when it changes, the live plots and the comparison page alike.
TEST(ColorScheme, PlotsFollowADarkPaletteAndBack) {
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.show();
  const QPalette light = window.palette();
  QCustomPlot* loss = window.livePlots()->plot(LivePlots::kLoss);
  QCustomPlot* compared = window.comparisonPage()->lossPlot();
  ASSERT_GT(loss->axisRect()->backgroundBrush().color().lightness(), 128);

  window.setPalette(darkPalette());
  for (QCustomPlot* plot : {loss, compared}) {
    EXPECT_LT(plot->axisRect()->backgroundBrush().color().lightness(), 64);
    EXPECT_GT(plot->xAxis->tickLabelColor().lightness(), 192);
    EXPECT_GT(plot->legend->textColor().lightness(), 192);
  }
  // A grabbed picture is dark too: the mean lightness of the plot's pixels.
  const QImage image = loss->toPixmap(400, 200).toImage();
  qint64 sum = 0;
  for (int y = 0; y < image.height(); y += 4)
    for (int x = 0; x < image.width(); x += 4) sum += QColor(image.pixel(x, y)).lightness();
  EXPECT_LT(sum / ((image.height() / 4) * (image.width() / 4)), 80);

  window.setPalette(light);
  EXPECT_GT(loss->axisRect()->backgroundBrush().color().lightness(), 128);
}

// GPU time that no op launched is shown with its share, never hidden.
TEST(KernelView, ShowsTheUnattributedShareOfGpuTime) {
  KernelView view;
  auto snapshot = std::make_shared<profiler::ProfileSnapshot>();
  snapshot->top_kernels = testing::realisticKernels();
  snapshot->gpu_attribution = {2'500'000, 10'000'000};
  view.setSnapshot(snapshot);
  const auto* label = view.findChild<QLabel*>(QStringLiteral("gpuAttribution"));
  ASSERT_NE(label, nullptr);
  EXPECT_EQ(label->text().toStdString(), "GPU time with no op: 2.500 ms of 10.000 ms traced (25.0%)");

  // The table leaves the warm-up step out as the op table does, and says what its kernels took.
  auto without_warmup = std::make_shared<profiler::ProfileSnapshot>(*snapshot);
  profiler::WarmupLeftOut left_out;
  left_out.kernels_left_out = true;
  left_out.kernels = 1234;
  left_out.kernel_gpu_ns = 5'000'000;
  without_warmup->warmup_left_out = left_out;
  without_warmup->profiled_steps = 19;
  view.setSnapshot(without_warmup);
  EXPECT_EQ(label->text().toStdString(),
            "GPU time with no op: 2.500 ms of 10.000 ms traced (25.0%)\n"
            "Step 1 left out as warm-up: its 1,234 kernels took " +
                profiler::text::ns_as_ms(5e6) + " (50% of the other 19 profiled steps together)");
}

// Until a gradient-sampled step measured readiness the pane says why it is empty;
// then the table, with the tensors measured and the thresholds said below it.
TEST(ReadinessPane, SaysWhyItIsEmptyThenShowsTheTableAndTheThresholds) {
  ReadinessPane pane;
  pane.setSnapshot(std::make_shared<profiler::ProfileSnapshot>());
  EXPECT_FALSE(pane.showsTable());
  const auto* hint = pane.findChild<QLabel*>(QStringLiteral("paneHint"));
  ASSERT_NE(hint, nullptr);
  EXPECT_TRUE(hint->text().contains(QStringLiteral("--grad-every"))) << hint->text().toStdString();

  auto snapshot = std::make_shared<profiler::ProfileSnapshot>();
  profiler::TensorQuantization weight{profiler::TensorRole::weight, {}};
  profiler::TensorQuantization gradient{profiler::TensorRole::weight_gradient, {}};
  for (auto* t : {&weight, &gradient})
    for (profiler::QuantMetrics& m : t->formats) m = {.elements = 64, .nonzero = 64, .signal = 1.0, .noise = 1e-4};
  snapshot->readiness.add({4, "blocks.0.mlp.fc", weight});
  snapshot->readiness.add({4, "blocks.0.mlp.fc", gradient});
  pane.setSnapshot(snapshot);
  EXPECT_TRUE(pane.showsTable());
  EXPECT_EQ(pane.model()->rowCount(), 1);
  EXPECT_EQ(pane.table()->model()->index(0, ReadinessModel::kLowestReady).data().toString(), QStringLiteral("NVFP4"));
  const QString notes = pane.notes();
  EXPECT_TRUE(notes.contains(QStringLiteral("Over 1 sampled step,"))) << notes.toStdString();
  EXPECT_TRUE(notes.contains(QStringLiteral("Measured: weights and weight gradients (standing in for the gradients of "
                                            "the layers' outputs")))
      << notes.toStdString();
  EXPECT_TRUE(notes.contains(QStringLiteral("e4m3 (fp8 e4m3, MXFP8): ready at >= 25 dB SQNR"))) << notes.toStdString();
}

TEST(ColorScheme, OnlyKnownSchemesAreAccepted) {
  EXPECT_TRUE(applyColorScheme(QStringLiteral("system")));
  EXPECT_FALSE(applyColorScheme(QStringLiteral("solarized")));
}

}  // namespace
}  // namespace ampscope::ui

namespace ampscope::ui {
namespace {

QString etaShown(const RunStatusBar& bar) {
  for (const QLabel* label : bar.findChildren<QLabel*>())
    if (label->text().startsWith(QStringLiteral("ETA"))) return label->text();
  return {};
}

// The time to the last step from the recent step time: a fast run's last 0.4 s are
// "< 1 s" (it said "0 s" with 244 steps to go), and a finished or stopped run has none.
TEST(RunStatusBar, TheEtaIsTheRecentStepTimeOverTheStepsLeft) {
  RunSeries series;
  for (int64_t step = 1; step <= 56; ++step) {
    profiler::StepRecord record;
    record.step = step;
    record.step_time_ms = 1.5;
    series.append(record);
  }
  RunStatusBar bar;
  RunInfo info;
  info.total_steps = 300;
  bar.showRun(series, info, true);
  EXPECT_EQ(etaShown(bar), QStringLiteral("ETA < 1 s"));  // 244 x 1.5 ms
  info.total_steps = 100'056;
  bar.showRun(series, info, true);
  EXPECT_EQ(etaShown(bar), QStringLiteral("ETA 2 min 30 s"));
  bar.showRun(series, info, false);
  EXPECT_EQ(etaShown(bar), QStringLiteral("ETA —"));
}

}  // namespace
}  // namespace ampscope::ui

namespace ampscope::ui {
namespace {

// A run with no traced kernels (the CPU, CUPTI off) shows the kernel line, not an empty
// kernel table that leaves the op table two rows in a short dock.
TEST(OpExplorer, TheKernelTableShowsOnlyWhenKernelsWereTraced) {
  OpExplorer explorer;
  explorer.resize(900, 400);
  explorer.show();
  auto cpu = std::make_shared<profiler::ProfileSnapshot>(*testing::realisticSnapshot(5));
  cpu->top_kernels.clear();
  cpu->gpu_tracing = "off: training on the CPU (ops are timed on the CPU)";
  explorer.setSnapshot(cpu);
  const auto* kernels = explorer.findChild<QTableView*>(QStringLiteral("opKernelTable"));
  const auto* title = explorer.findChild<QLabel*>(QStringLiteral("opKernelsTitle"));
  ASSERT_NE(kernels, nullptr);
  ASSERT_NE(title, nullptr);
  ASSERT_TRUE(explorer.table()->currentIndex().isValid());  // the top op, selected on the first fill
  EXPECT_TRUE(kernels->isHidden());
  // Why, as the session says it: not "CPU, or CUPTI off" on a run that knows which.
  EXPECT_TRUE(title->text().endsWith(": none traced, GPU trace off: training on the CPU (ops are timed on the CPU)"))
      << title->text().toStdString();
  ASSERT_TRUE(testing::waitUntil([&] { return explorer.table()->height() > 250; }))
      << "the op table takes the room: " << explorer.table()->height();

  explorer.setSnapshot(testing::realisticSnapshot(6));  // a GPU run's kernels
  EXPECT_FALSE(kernels->isHidden());
  EXPECT_TRUE(title->text().contains(QStringLiteral(" and the ops it called: "))) << title->text().toStdString();
  ASSERT_TRUE(testing::waitUntil([&] { return kernels->height() > 40; })) << kernels->height();
}

}  // namespace
}  // namespace ampscope::ui
