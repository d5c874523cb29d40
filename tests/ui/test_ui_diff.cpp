// The eager and the compiled run side by side in the GUI (issue 28): the model
// under QAbstractItemModelTester, and the main window reading two session files
// off the GUI thread into its diff window (differences first), or saying in one
// line why it cannot.
#include "profiler/store/session_writer.h"
#include "tests/profiler_core/session_fixture.h"
#include "tests/support/test_support.h"
// Qt from here on.
#include <QAbstractItemModelTester>
#include <QTableView>

#include "tests/ui/qt_test_env.h"
#include "ui/models/eager_vs_compiled_model.h"
#include "ui/models/model_roles.h"
#include "ui/models/store_session_io.h"
#include "ui/widgets/diff_window.h"
#include "ui/widgets/file_loader.h"
#include "ui/widgets/main_window.h"

namespace ampscope::ui {
namespace {

using profiler::Agreement;
using profiler::OpCategory;
using profiler::OpStats;
using profiler::Phase;

profiler::ModulePrecision module_row(std::string module, Agreement agreement) {
  profiler::ModulePrecision m;
  m.module = std::move(module);
  m.kind = "GEMM";
  m.agreement = agreement;
  m.eager.present = agreement != Agreement::kCompiledOnly;
  m.eager.operand_dtypes = {"bfloat16"};
  m.eager.output_dtypes = {"bfloat16"};
  m.eager.decision = OpCategory::kDemoted;
  m.compiled.present = agreement != Agreement::kEagerOnly;
  m.compiled.operand_dtypes = {agreement == Agreement::kDiffers ? "float32" : "bfloat16"};
  m.compiled.output_dtypes = m.compiled.operand_dtypes;
  return m;
}

TEST(DiffModel, ShowsEachRunsDtypesAndTheAgreementUnderTheModelTester) {
  EagerVsCompiledModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setRows({module_row("fc1", Agreement::kSame), module_row("fc2", Agreement::kDiffers),
                 module_row("", Agreement::kCompiledOnly)});
  ASSERT_EQ(model.rowCount(), 3);
  const auto cell = [&](int r, int c, int role = Qt::DisplayRole) { return model.index(r, c).data(role); };
  EXPECT_EQ(cell(0, EagerVsCompiledModel::kEager).toString(), QStringLiteral("bfloat16 → bfloat16 (demoted)"));
  EXPECT_EQ(cell(1, EagerVsCompiledModel::kCompiled).toString(), QStringLiteral("float32 → float32"));
  EXPECT_EQ(cell(1, EagerVsCompiledModel::kAgreement).toString(), QStringLiteral("differs"));
  EXPECT_EQ(cell(1, 0, AgreementRole).toInt(), static_cast<int>(Agreement::kDiffers));
  EXPECT_EQ(cell(2, EagerVsCompiledModel::kModule).toString(), QStringLiteral("(no module)"));
  EXPECT_EQ(cell(2, EagerVsCompiledModel::kEager).toString(), QStringLiteral("—"));
  EXPECT_FALSE(cell(2, EagerVsCompiledModel::kAgreement, Qt::ToolTipRole).toString().isEmpty());
  model.setRows({});
  EXPECT_EQ(model.rowCount(), 0);
}

OpStats leaf_gemm(std::string module, std::string dtype, bool compiled) {
  OpStats r;
  r.name = "aten::addmm";
  r.module = std::move(module);
  r.phase = Phase::kForward;
  r.input_dtypes = {dtype, dtype, dtype};
  r.output_dtypes = {dtype};
  r.calls = 4;
  r.compiled = compiled;
  r.top_level = compiled;
  return r;
}

TEST(DiffWindow, TheMainWindowComparesTwoSessionsOffTheGuiThreadDifferencesFirst) {
  test::ScratchDir dir;
  // Eager: the fixture's session with fc1's GEMM in fp16. Compiled: the same, its
  // fc1 GEMM read from a graph in float32, and a graph GEMM of fc2 eager had not.
  test::Fixture eager = test::make_fixture();
  eager.op_stats.push_back(leaf_gemm("fc1", "float16", false));
  test::Fixture compiled = test::make_fixture();
  compiled.op_stats.push_back(leaf_gemm("fc1", "float32", true));
  compiled.op_stats.push_back(leaf_gemm("fc2", "float16", true));
  const std::string eager_path = (dir / "eager.ampscope").string();
  const std::string compiled_path = (dir / "compiled.ampscope").string();
  test::write_fixture_file(eager_path, eager);
  test::write_fixture_file(compiled_path, compiled);

  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.compareEagerAndCompiled(QString::fromStdString(eager_path), QString::fromStdString(compiled_path));
  ASSERT_TRUE(testing::waitUntil([&] { return window.diffWindow() != nullptr; }));
  DiffWindow* shown = window.diffWindow();
  EXPECT_TRUE(shown->isVisible());
  QAbstractItemModel* table = shown->table()->model();
  ASSERT_EQ(table->rowCount(), 2);
  // The difference first, then what only the compiled run ran.
  EXPECT_EQ(table->index(0, EagerVsCompiledModel::kModule).data().toString(), QStringLiteral("fc1"));
  EXPECT_EQ(table->index(0, EagerVsCompiledModel::kAgreement).data().toString(), QStringLiteral("differs"));
  // Autocast's decision from the fixture's aten::linear around the GEMM.
  EXPECT_EQ(table->index(0, EagerVsCompiledModel::kEager).data().toString(),
            QStringLiteral("float16 → float16 (demoted)"));
  EXPECT_EQ(table->index(1, EagerVsCompiledModel::kAgreement).data().toString(), QStringLiteral("compiled only"));
  EXPECT_TRUE(shown->summary().contains(QStringLiteral("0 same, 1 differ, 0 eager only, 1 compiled only")))
      << shown->summary().toStdString();

  // A file that is not there: one line, in the window's error banner.
  bool failed = false;
  QObject::connect(window.fileLoader(), &FileLoader::diffFailed, [&](const QString& message) {
    failed = true;
    EXPECT_FALSE(message.contains(QLatin1Char('\n'))) << message.toStdString();
  });
  window.compareEagerAndCompiled(QString::fromStdString((dir / "none.ampscope").string()),
                                 QString::fromStdString(compiled_path));
  ASSERT_TRUE(testing::waitUntil([&] { return failed; }));
  EXPECT_TRUE(window.bannerText().contains(QStringLiteral("Cannot compare"))) << window.bannerText().toStdString();
}

}  // namespace
}  // namespace ampscope::ui
