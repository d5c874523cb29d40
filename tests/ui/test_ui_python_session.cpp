// A session captured from a Python script (`ampscope run`) shown as itself (issue
// 32): the Run panel shows the script's facts read-only instead of the built-in
// run's settings, no "nan" in the status bar or any table (no samples/s figure
// where no batch was seen), the empty gradient-norm plot says why, and the state
// texts say one thing: the session's state, not a built-in run's "Finished".
// The cases name only the fields they set; the rest keep their defaults, as C++20's
// aggregate initialization guarantees. GCC 12 warns about it all the same.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include "profiler/analysis/warmup_step.h"
#include "profiler/process_identity.h"
#include "profiler/session_meta_keys.h"
#include "profiler/store/session_writer.h"
#include "tests/support/test_support.h"
// Qt from here on.
#include <qcustomplot.h>

#include <QAbstractItemModelTester>
#include <QAbstractItemView>
#include <QGroupBox>
#include <QLabel>
#include <QStatusBar>
#include <cmath>

#include "tests/ui/qt_test_env.h"
#include "tests/ui/ui_test_data.h"
#include "tests/ui/window_files.h"
#include "ui/models/compiled_kernel_model.h"
#include "ui/models/model_roles.h"
#include "ui/models/op_stats_model.h"
#include "ui/models/store_session_io.h"
#include "ui/widgets/category_strip.h"
#include "ui/widgets/compiled_pane.h"
#include "ui/widgets/gradients_pane.h"
#include "ui/widgets/live_plots.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/op_explorer.h"
#include "ui/widgets/run_panel.h"
#include "ui/widgets/session_follower.h"

namespace ampscope::ui {
namespace {

namespace key = profiler::meta_key;

// As the Python capture writes it: kind "python", the script's facts, and steps whose
// samples/s and gradient norm are unknown (no batch seen, no clip_grad_norm_); `peaks`,
// where given, the steps' memory high-water marks; `grad_norm`, where given, every step's.
std::unique_ptr<profiler::SessionWriter> python_session(const std::string& path, int64_t steps,
                                                        const std::vector<int64_t>& peaks = {},
                                                        double grad_norm = std::nan("")) {
  profiler::SessionMeta meta;
  meta.model = "python amp_typical.py: Net (13,384 parameters)";
  meta.precision = "fp16";
  meta.scaler_enabled = true;
  meta.device = "cpu";
  auto writer = profiler::SessionWriter::create(path, meta, false);
  writer->set_meta_value(key::kKind, key::kKindPython);
  writer->set_meta_value(key::kScript, "examples/amp_typical.py");
  writer->set_meta_value(key::kArguments, "--steps 600 --init-scale 16777216");
  writer->set_meta_value(key::kOptimizers, "SGD");
  profiler::OpStats row;
  row.name = "aten::linear";
  row.module = "blocks.0.fc";
  row.category = profiler::OpCategory::kDemoted;
  row.top_level = true;
  row.input_dtypes = {"float32", "float32", "float32"};
  row.output_dtypes = {"float16"};
  row.calls = steps;
  row.cpu_time_ns = 1000 * steps;
  writer->replace_op_stats({row});
  profiler::OpRecord op;  // a session with ops has a profile to show
  op.id = 1;
  op.step = 1;
  op.name = row.name;
  op.module = row.module;
  op.category = row.category;
  op.start_ns = 0;
  op.end_ns = 1000;
  writer->append_ops({op});
  writer->set_meta_value(key::kProfiledSteps, std::to_string(steps));
  for (int64_t step = 1; step <= steps; ++step) {
    profiler::StepRecord r;
    r.step = step;
    r.loss = 1.0 / static_cast<double>(step);
    r.loss_scale = 65536.0;
    r.lr = 0.01;
    r.grad_norm = grad_norm;
    r.step_time_ms = 3.0;
    r.samples_per_second = std::nan("");
    if (!peaks.empty()) r.mem_peak_bytes = peaks.at(static_cast<size_t>(step - 1));
    writer->append_step(r);
  }
  writer->flush();
  return writer;
}

// The window, showing, with the store behind File→Open.
struct ShownWindow {
  StoreSessionIO io;
  MainWindow window{MainWindow::Options{.restore_layout = false}};
  ShownWindow() {
    window.setSessionIO(&io);
    window.show();
  }
  bool open(const std::string& path) { return testing::openAndWait(window, QString::fromStdString(path)); }
};

QString statusBarText(MainWindow& window) {
  QStringList texts;
  for (const QLabel* label : window.statusBar()->findChildren<QLabel*>())
    if (label->isVisibleTo(&window)) texts << label->text();
  return texts.join(QStringLiteral(" | "));
}

// Every cell any table or tree of the window shows.
QStringList tableCells(MainWindow& window) {
  QStringList cells;
  for (const QAbstractItemView* view : window.findChildren<QAbstractItemView*>()) {
    const QAbstractItemModel* model = view->model();
    if (!model) continue;
    for (int r = 0; r < model->rowCount(); ++r)
      for (int c = 0; c < model->columnCount(); ++c) cells << model->index(r, c).data().toString();
  }
  return cells;
}

TEST(PythonSession, ShownAsItselfWithoutNaNAndWithItsFacts) {
  test::ScratchDir dir;
  const std::string path = (dir / "python.ampscope").string();
  {
    auto writer = python_session(path, 12);
    writer->set_meta_value(key::kFinalState, "finished");
    writer->close();
  }
  ShownWindow shown;
  MainWindow& window = shown.window;
  ASSERT_TRUE(shown.open(path)) << window.bannerText().toStdString();
  ASSERT_EQ(window.livePlots()->graph(LivePlots::kLoss, 0)->dataCount(), 12);

  const QString status = statusBarText(window);
  EXPECT_FALSE(status.contains(QStringLiteral("nan"), Qt::CaseInsensitive)) << status.toStdString();
  EXPECT_TRUE(status.contains(QStringLiteral("— samples/s"))) << status.toStdString();
  const QStringList cells = tableCells(window);
  EXPECT_TRUE(cells.contains(QStringLiteral("aten::linear")));  // the tables were filled
  for (const QString& cell : cells)
    EXPECT_FALSE(cell.contains(QStringLiteral("nan"), Qt::CaseInsensitive)) << cell.toStdString();

  // The Run panel: the script's own facts, read-only, not the built-in run's settings.
  EXPECT_TRUE(window.runPanel()->showsScriptFacts());
  const QString facts = testing::scriptFactsText(window);
  for (const char* fact : {"examples/amp_typical.py", "--steps 600 --init-scale 16777216", "fp16 autocast",
                           "torch.amp.GradScaler", "SGD", "does not clip gradients"})
    EXPECT_TRUE(facts.contains(QString::fromUtf8(fact))) << fact << " in " << facts.toStdString();
  // Written before sessions said how their script ran: it cannot be run again from here.
  EXPECT_FALSE(window.runPanel()->rerunScriptButton()->isEnabled());

  // The empty gradient-norm plot says why.
  EXPECT_TRUE(window.livePlots()->gradNormNote().contains(QStringLiteral("does not clip gradients")))
      << window.livePlots()->gradNormNote().toStdString();
  EXPECT_TRUE(window.livePlots()->learningRateNote().isEmpty());  // no scheduler ran ahead

  // One state: the session's, in the status bar and the panel alike.
  EXPECT_TRUE(status.contains(QStringLiteral("Recorded session: finished"))) << status.toStdString();
  EXPECT_TRUE(window.runPanel()->stateText().startsWith(QStringLiteral("Recorded session: finished")))
      << window.runPanel()->stateText().toStdString();
}

// A script that does not clip has no norm per step; the plot shows the range samples' total
// norm at their steps (points), says what they are, and leaves a step whose gradients
// overflowed out (no point, as clip_grad_norm_ would return inf there). A session whose steps
// have norms of their own (the control) shows those only.
TEST(PythonSession, TheGradientNormPlotShowsTheRangeSamplesWhereTheScriptDoesNotClip) {
  test::ScratchDir dir;
  const std::string path = (dir / "python.ampscope").string();
  const auto sample = [](int64_t step, const char* parameter, double norm, double nonfinite) {
    profiler::GradientSample g;
    g.step = step;
    g.parameter = parameter;
    g.loss_scale = 65536.0;
    g.numel = 100;
    g.norm = norm;
    g.nonfinite_fraction = nonfinite;
    return g;
  };
  {
    auto writer = python_session(path, 12);
    writer->append_gradients({sample(4, "fc.weight", 3.0, 0.0), sample(4, "fc.bias", 4.0, 0.0)});
    writer->append_gradients({sample(8, "fc.weight", 3.0, 0.01), sample(8, "fc.bias", 4.0, 0.0)});
    writer->append_gradients({sample(12, "fc.weight", 0.6, 0.0), sample(12, "fc.bias", 0.8, 0.0)});
    writer->set_meta_value(key::kFinalState, "finished");
    writer->close();
  }
  ShownWindow shown;
  ASSERT_TRUE(shown.open(path)) << shown.window.bannerText().toStdString();
  LivePlots& plots = *shown.window.livePlots();
  QCPGraph* sampled = plots.graph(LivePlots::kGradNorm, LivePlots::kSampledGradNormGraph);
  ASSERT_EQ(sampled->dataCount(), 2);
  EXPECT_EQ(sampled->data()->at(0)->key, 4.0);
  EXPECT_DOUBLE_EQ(sampled->data()->at(0)->value, 5.0);  // sqrt(3² + 4²)
  EXPECT_EQ(sampled->data()->at(1)->key, 12.0);
  EXPECT_DOUBLE_EQ(sampled->data()->at(1)->value, 1.0);
  EXPECT_EQ(sampled->name(), QStringLiteral("at range-sampled steps only"));
  EXPECT_TRUE(plots.plot(LivePlots::kGradNorm)->legend->visible());
  EXPECT_TRUE(plots.gradNormNote().isEmpty()) << plots.gradNormNote().toStdString();
  // The y axis takes the points in: both are inside it.
  EXPECT_TRUE(plots.plot(LivePlots::kGradNorm)->yAxis->range().contains(5.0));
  EXPECT_TRUE(plots.plot(LivePlots::kGradNorm)->yAxis->range().contains(1.0));

  // The control: the same samples, and steps with a norm of their own.
  const std::string clipped = (dir / "clipped.ampscope").string();
  {
    auto writer = python_session(clipped, 12, {}, 2.0);
    writer->append_gradients({sample(4, "fc.weight", 3.0, 0.0), sample(4, "fc.bias", 4.0, 0.0)});
    writer->set_meta_value(key::kGradNormSource, "clip_grad_norm_");
    writer->set_meta_value(key::kFinalState, "finished");
    writer->close();
  }
  ASSERT_TRUE(shown.open(clipped)) << shown.window.bannerText().toStdString();
  EXPECT_EQ(plots.graph(LivePlots::kGradNorm, LivePlots::kSampledGradNormGraph)->dataCount(), 0);
  EXPECT_EQ(plots.graph(LivePlots::kGradNorm, 0)->dataCount(), 12);
  EXPECT_FALSE(plots.plot(LivePlots::kGradNorm)->legend->visible());
}

// A session whose op table leaves out step 1 (the capture's warm-up rule): the op table
// page says what step 1's ops took against the table's steps; a session that left nothing
// out (an older file, or one recorded step) says nothing, and a live run clears it.
TEST(PythonSession, TheOpTableSaysTheWarmUpStepItLeavesOut) {
  test::ScratchDir dir;
  const std::string path = (dir / "python.ampscope").string();
  {
    auto writer = python_session(path, 12);
    profiler::WarmupLeftOut left_out;
    left_out.calls = 40;
    left_out.cpu_time_ns = 36'000;  // 3× the table's 12 µs
    writer->set_meta_value(key::kWarmupLeftOut, profiler::warmup_meta_value(left_out));
    writer->set_meta_value(key::kProfiledSteps, "11");
    writer->set_meta_value(key::kFinalState, "finished");
    writer->close();
  }
  ShownWindow shown;
  ASSERT_TRUE(shown.open(path)) << shown.window.bannerText().toStdString();
  EXPECT_EQ(shown.window.opExplorer()->tableNote(),
            QStringLiteral("Step 1 left out as warm-up: its ops took 0.036 ms CPU (3.0× the other 11 profiled steps "
                           "together); one-off costs (lazy initialisation, first allocations) that no later step "
                           "pays."));
  const std::string older = (dir / "older.ampscope").string();
  {
    auto writer = python_session(older, 12);
    writer->set_meta_value(key::kFinalState, "finished");
    writer->close();
  }
  ASSERT_TRUE(shown.open(older)) << shown.window.bannerText().toStdString();
  EXPECT_TRUE(shown.window.opExplorer()->tableNote().isEmpty()) << shown.window.opExplorer()->tableNote().toStdString();
}

// FSDP's mixed precision, no autocast region: the window says the run computed in bf16 (title,
// status bar, the gradients' run precision), and the Run panel how FSDP held the parameters.
TEST(PythonSession, FsdpsMixedPrecisionIsTheRunsPrecisionWhereNoAutocastRegionIs) {
  test::ScratchDir dir;
  const std::string path = (dir / "fsdp.rank0.ampscope").string();
  {
    auto writer = python_session(path, 4);
    writer->set_meta_value(key::kPrecision, "fp32");  // no autocast region seen
    writer->set_meta_value(key::kParameterDtypes, "float32:13384");
    writer->set_meta_value(key::kSharding, R"({"fsdp": [{"api": "fully_shard", "param_dtype": "bf16",)"
                                           R"( "reduce_dtype": "fp32", "modules": 3}], "sharded_parameters": 13384})");
    writer->set_meta_value(key::kFinalState, "finished");
    writer->close();
  }
  ShownWindow shown;
  MainWindow& window = shown.window;
  ASSERT_TRUE(shown.open(path)) << window.bannerText().toStdString();
  EXPECT_TRUE(window.windowTitle().contains(QStringLiteral("(13,384 parameters) · bf16 · cpu")))
      << window.windowTitle().toStdString();
  const QString status = statusBarText(window);
  EXPECT_TRUE(status.contains(QStringLiteral("| bf16"))) << status.toStdString();
  EXPECT_FALSE(status.contains(QStringLiteral("fp32"))) << status.toStdString();
  const QString facts = testing::scriptFactsText(window);
  for (const char* fact : {"bf16 compute on fp32 parameters: FSDP's mixed precision (param_dtype bf16), no autocast",
                           "FSDP (fully_shard) on 3 modules: param_dtype bf16, reduce_dtype fp32"})
    EXPECT_TRUE(facts.contains(QString::fromUtf8(fact))) << fact << " in " << facts.toStdString();
}

TEST(PythonSession, AFollowedSessionSaysLiveEverywhereUntilItEnds) {
  test::ScratchDir dir;
  const std::string path = (dir / "live.ampscope").string();
  auto writer = python_session(path, 3);
  // This process plays the script's: the window follows while it runs.
  writer->set_meta_value(key::kPid, std::to_string(profiler::current_process_id()));
  writer->set_meta_value(key::kHost, profiler::current_host_name());
  writer->flush();
  ShownWindow shown;
  MainWindow& window = shown.window;
  ASSERT_TRUE(shown.open(path)) << window.bannerText().toStdString();
  ASSERT_TRUE(window.sessionFollower()->isFollowing());
  const QString status = statusBarText(window);
  EXPECT_FALSE(status.contains(QStringLiteral("Finished"))) << status.toStdString();
  EXPECT_TRUE(status.contains(QStringLiteral("Live session"))) << status.toStdString();
  EXPECT_TRUE(window.runPanel()->stateText().startsWith(QStringLiteral("Live session")))
      << window.runPanel()->stateText().toStdString();
  EXPECT_TRUE(window.runPanel()->showsScriptFacts());

  writer->set_meta_value(key::kFinalState, "finished");
  writer->close();
  ASSERT_TRUE(testing::waitUntil([&] { return !window.sessionFollower()->isFollowing(); }, std::chrono::seconds(30)));
  EXPECT_TRUE(window.runPanel()->stateText().startsWith(QStringLiteral("Recorded session: finished")))
      << window.runPanel()->stateText().toStdString();
  EXPECT_TRUE(statusBarText(window).contains(QStringLiteral("Recorded session: finished")));
}

// A range sample holds the modules' outputs to its step's end and runs its passes there; the
// high-water mark it raises stays raised, so the memory plot's peak line reads high from
// then on. The plot says what the other steps reached.
TEST(PythonSession, TheMemoryPlotSaysThePeakTheStepsOutsideRangeSamplesReached) {
  test::ScratchDir dir;
  const std::string path = (dir / "peak.ampscope").string();
  {
    std::vector<int64_t> peaks(12, int64_t{300} << 20);
    peaks[0] = int64_t{200} << 20;
    peaks[1] = int64_t{250} << 20;  // the training's own peak, before the sample at step 5
    peaks[2] = peaks[3] = int64_t{250} << 20;
    auto writer = python_session(path, 12, peaks);
    writer->append_gradients({testing::gradientSample("block.fc1.weight", -10, 2, 65536.0, 5)});
    writer->set_meta_value(key::kFinalState, "finished");
    writer->close();
  }
  ShownWindow shown;
  MainWindow& window = shown.window;
  ASSERT_TRUE(shown.open(path)) << window.bannerText().toStdString();
  EXPECT_EQ(window.livePlots()->memoryNote(),
            QStringLiteral("peak resident set 300 MiB; 250 MiB outside range-sampled steps (a sample holds the "
                           "modules' outputs to its step's end and runs its passes there)"));

  // A session whose samples raised nothing shows no note.
  const std::string flat = (dir / "flat.ampscope").string();
  {
    auto writer = python_session(flat, 12, std::vector<int64_t>(12, int64_t{300} << 20));
    writer->append_gradients({testing::gradientSample("block.fc1.weight", -10, 2, 65536.0, 5)});
    writer->set_meta_value(key::kFinalState, "finished");
    writer->close();
  }
  ASSERT_TRUE(shown.open(flat)) << window.bannerText().toStdString();
  EXPECT_EQ(window.livePlots()->memoryNote(), QString());
}

// Issue 30: a scheduler that stepped after skipped optimizer steps is flagged on the
// learning-rate plot, with the count; where the first non-finite gradient started in
// backward is named in the gradients pane, beside the forward activation origin.
TEST(PythonSession, ASchedulerAheadOfItsOptimizerAndTheBackwardOriginAreShown) {
  test::ScratchDir dir;
  const std::string path = (dir / "drift.ampscope").string();
  {
    auto writer = python_session(path, 12);
    std::vector<profiler::OptimizerStepRecord> decisions;
    std::vector<profiler::SchedulerStepRecord> calls;
    for (int64_t step = 1; step <= 12; ++step) {
      const bool skipped = step == 3 || step == 7;
      profiler::OptimizerStepRecord d;
      d.step = step;
      d.name = "SGD";
      d.stepped = !skipped;
      d.found_inf = d.skipped = skipped;
      decisions.push_back(d);
      calls.push_back({.call = step - 1, .scheduler = 0, .name = "StepLR", .optimizer = 0, .step = step,
                       .after_skipped = skipped, .lr = 0.01});
    }
    writer->append_optimizer_steps(std::move(decisions));
    writer->append_scheduler_steps(std::move(calls));
    profiler::BackwardCheck clean;
    clean.step = 10;
    clean.gradients = 9;
    writer->append_backward_checks({{.step = 4, .skipped = true, .gradients = 9, .nonfinite = 3,
                                     .module = "block.boom", .side = profiler::GradientSide::kInput},
                                    clean});
    writer->append_gradients({testing::gradientSample("block.fc1.weight", -10, 2, 65536.0, 10)});
    writer->set_meta_value(key::kFinalState, "finished");
    writer->close();
  }
  ShownWindow shown;
  MainWindow& window = shown.window;
  ASSERT_TRUE(shown.open(path)) << window.bannerText().toStdString();
  EXPECT_EQ(window.livePlots()->learningRateNote(),
            QStringLiteral("StepLR advanced after 2 optimizer steps GradScaler skipped: its schedule runs 2 steps "
                           "ahead of the optimizer"));
  const QString backward = window.gradientsPane()->backwardText();
  EXPECT_TRUE(backward.startsWith(QStringLiteral("Backward: the first non-finite gradient in backward came out of "
                                                 "block.boom's backward (its input gradient) at step 4; 1 of the 2 "
                                                 "checked steps (1 skipped by GradScaler) had one")))
      << backward.toStdString();
}

// torch.compile'd code as `ampscope run` stores it: a graph op row (compiled, no time of
// its own), the forward graph's call with a fused kernel and an extern GEMM, a graph break.
std::vector<profiler::CompiledKernelRow> compiled_rows() {
  profiler::CompiledKernelRow graph;
  graph.graph = 0;
  graph.phase = profiler::Phase::kForward;
  graph.kind = profiler::kCompiledGraphCall;
  graph.calls = 4;
  graph.cpu_time_ns = 10'000'000;
  profiler::CompiledKernelRow fused = graph;
  fused.kind = profiler::kCompiledFusedKernel;
  fused.kernel = "graph_0_cpp_fused_gelu_1";
  fused.cpu_time_ns = 3'000'000;
  fused.ops = {{"mul", "aten::mul", "layers.1", "unchanged", {"bfloat16"}, {"bfloat16"}},
               {"erf", "aten::erf", "layers.1", "unchanged", {"bfloat16"}, {"bfloat16"}},
               {"mul_1", "aten::mul", "layers.1", "unchanged", {"bfloat16"}, {"bfloat16"}}};
  profiler::CompiledKernelRow gemm = graph;
  gemm.kind = profiler::kCompiledExternKernel;
  gemm.kernel = "aten::addmm";
  gemm.ordinal = 1;
  gemm.cpu_time_ns = 6'000'000;
  gemm.ops = {{"addmm_1", "aten::addmm", "layers.2", "demoted", {"float32", "bfloat16"}, {"bfloat16"}}};
  return {graph, fused, gemm};
}

TEST(CompiledKernelModel, KernelsWithTheirShareOfTheGraphAndTheOpsTheyFuse) {
  CompiledKernelModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setRows(compiled_rows());
  ASSERT_EQ(model.rowCount(), 2);  // the graph's own row gives the shares, it is not a row
  const auto cell = [&](int r, int c) { return model.index(r, c).data().toString(); };
  EXPECT_EQ(cell(0, CompiledKernelModel::kKernel), QStringLiteral("graph_0_cpp_fused_gelu_1"));
  EXPECT_EQ(cell(0, CompiledKernelModel::kGraphShare), QStringLiteral("30.0 %"));
  EXPECT_EQ(cell(0, CompiledKernelModel::kGraphOps), QStringLiteral("layers.1 unchanged: mul x2, erf"));
  EXPECT_EQ(cell(1, CompiledKernelModel::kKernel), QStringLiteral("aten::addmm #2"));
  EXPECT_EQ(cell(1, CompiledKernelModel::kGraphShare), QStringLiteral("60.0 %"));
  EXPECT_EQ(model.index(1, CompiledKernelModel::kCpuTime).data(SortRole).toLongLong(), 6'000'000);
  model.setRows({});
  EXPECT_EQ(model.rowCount(), 0);
}

TEST(PythonSession, CompiledCodeHasItsPaneAndItsOpRowsAreMarked) {
  test::ScratchDir dir;
  const std::string path = (dir / "compiled.ampscope").string();
  {
    auto writer = python_session(path, 4);
    profiler::OpStats graph_op;
    graph_op.name = "aten::addmm";
    graph_op.module = "layers.2";
    graph_op.category = profiler::OpCategory::kDemoted;
    graph_op.phase = profiler::Phase::kForward;
    graph_op.top_level = true;
    graph_op.compiled = true;
    graph_op.input_dtypes = {"float32", "bfloat16"};
    graph_op.output_dtypes = {"bfloat16"};
    graph_op.calls = 4;
    profiler::OpStats eager;
    eager.name = "Torch-Compiled Region: 0/0";
    eager.top_level = true;
    eager.calls = 4;
    eager.cpu_time_ns = 12'000'000;
    profiler::OpStats compiling;  // a graph break's frame compiled inside the region's first call
    compiling.name = std::string(profiler::kTorchCompileOp);
    compiling.calls = 1;
    compiling.cpu_time_ns = 2'000'000;
    writer->replace_op_stats({eager, graph_op, compiling});
    writer->replace_compiled_kernels(compiled_rows());
    writer->set_meta_value(key::kCompiledGraphs, "2");
    writer->set_meta_value(key::kCompileGraphBreaks,
                           R"([{"where": "train.py:41", "reason": "print() is not supported", "count": 4}])");
    // Two layers `module.compile()` compiled nothing in (their code is all PyTorch's).
    writer->set_meta_value(key::kCompileRanEagerly,
                           R"([{"module": "encoder.layers.0", "cls": "TransformerEncoderLayer"},
                               {"module": "encoder.layers.1", "cls": "TransformerEncoderLayer"}])");
    writer->set_meta_value(key::kFinalState, "finished");
    writer->close();
  }
  ShownWindow shown;
  MainWindow& window = shown.window;
  ASSERT_TRUE(shown.open(path)) << window.bannerText().toStdString();
  auto* pane = window.findChild<CompiledPane*>();
  ASSERT_NE(pane, nullptr);
  ASSERT_TRUE(pane->showsContent());
  EXPECT_TRUE(pane->summary().contains(QStringLiteral("2 AOTAutograd graphs"))) << pane->summary().toStdString();
  EXPECT_TRUE(pane->summary().contains(QStringLiteral("90% in the kernels below"))) << pane->summary().toStdString();
  EXPECT_TRUE(pane->events().contains(QStringLiteral("Graph break at train.py:41 (4×): print() is not supported")))
      << pane->events().toStdString();
  EXPECT_TRUE(pane->events().startsWith(
      QStringLiteral("2 modules compiled in place ran eagerly (torch.compile compiled nothing in them): "
                     "TransformerEncoderLayer ×2 (encoder.layers.0, encoder.layers.1). `module.compile()`")))
      << pane->events().toStdString();
  EXPECT_EQ(pane->model()->rowCount(), 2);
  // The Ops pane marks the graph's op as compiled, its time "fused" (not a 0 ns op).
  bool marked = false;
  for (auto* model : window.findChildren<OpStatsModel*>())
    for (int r = 0; r < model->rowCount(); ++r)
      if (model->row(r).compiled) {
        marked = true;
        EXPECT_EQ(model->index(r, OpStatsModel::kPhase).data().toString(), QStringLiteral("forward · compiled"));
        EXPECT_EQ(model->index(r, OpStatsModel::kCpuTime).data().toString(), QStringLiteral("fused"));
        EXPECT_TRUE(model->index(r, 0).data(CompiledRole).toBool());
      }
  EXPECT_TRUE(marked);
  // The strip counts the region's kernels by what they computed: the GEMM's 6 ms
  // demoted, the gelu's 3 ms unchanged, both in bf16, of the 10 ms left when the 2 ms
  // compile inside it is in no category; the region's row alone read "unchanged 100 %"
  // in "other" dtypes.
  auto* strip = window.findChild<CategoryStrip*>();
  ASSERT_NE(strip, nullptr);
  const QString text = strip->summaryText();
  EXPECT_TRUE(text.startsWith(QStringLiteral("CPU time 10.0 ms"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("demoted 60 % · unchanged 40 %"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("computed in bf16 90 % · other 10 %"))) << text.toStdString();
}

}  // namespace
}  // namespace ampscope::ui
