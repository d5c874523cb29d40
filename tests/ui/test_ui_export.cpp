// File → Export data: the shown session exports as a Chrome/Perfetto trace, CSV tables or a JSON
// summary, and a comparison as JSON or CSV, the files `ampscope export` writes (one dispatch,
// profiler/report/file_export.h), off the GUI thread; the save dialog's file type is the format.
#include <nlohmann/json.hpp>

#include "profiler/analysis/comparison.h"
#include "profiler/report/file_export.h"
#include "profiler/report/findings.h"
#include "profiler/report/report_data.h"
#include "profiler/session_meta_keys.h"
#include "profiler/store/comparison_store.h"
#include "profiler/store/session_view.h"
#include "tests/profiler_core/session_fixture.h"
#include "tests/report/report_fixture.h"
#include "tests/support/test_support.h"
// Qt from here on.
#include <filesystem>

#include "tests/ui/qt_test_env.h"
#include "tests/ui/window_files.h"
#include "ui/models/store_session_io.h"
#include "ui/widgets/export_dialog.h"
#include "ui/widgets/main_window.h"

namespace ampscope::ui {
namespace {

using profiler::ExportFormat;

// A comparison file, as `ampscope compare` writes one.
void write_comparison(const std::string& path, const profiler::Comparison& c) {
  auto writer = profiler::ComparisonWriter::create(path, c, false);
  for (const profiler::VariantRun& v : c.variants) {
    writer->add_variant(v);
    for (size_t r = 0; r < v.repeats.size(); ++r) writer->add_repeat(v.variant, static_cast<int64_t>(r), v.repeats[r]);
    if (v.profiled_steps > 0) writer->set_profile(v.variant, v.op_stats, v.profiled_steps);
  }
  writer->set_meta(profiler::meta_key::kFinalState, "finished");
}

bool exportAndWait(MainWindow& window, ExportFormat format, const std::string& target) {
  const QString path = QString::fromStdString(target);
  return testing::startAndWait(window, &MainWindow::dataExported, path,
                               [&] { return window.exportData(format, path); });
}

TEST(ExportData, TheShownSessionExportsAsATraceCsvTablesAndAJsonSummaryWithItsFindings) {
  test::ScratchDir dir;
  const std::string session = (dir / "s.ampscope").string();
  test::write_fixture_file(session, test::make_fixture());
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  EXPECT_FALSE(window.exportData(ExportFormat::kJson, QString::fromStdString((dir / "none.json").string())));
  EXPECT_TRUE(window.bannerText().contains(QStringLiteral("open a session first")))
      << window.bannerText().toStdString();
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(session))) << window.bannerText().toStdString();

  const std::string json_path = (dir / "s.summary.json").string();
  ASSERT_TRUE(exportAndWait(window, ExportFormat::kJson, json_path)) << window.bannerText().toStdString();
  const auto j = nlohmann::json::parse(test::read_file(json_path));
  EXPECT_EQ(j["meta"]["model"], "MLP 2x64");
  const profiler::SessionFindings findings =
      profiler::session_findings(profiler::load_session_view(session, profiler::kReportViewOptions));
  EXPECT_EQ(j["findings"]["verdict"].get<std::vector<std::string>>(), findings.verdict);

  const std::string trace = (dir / "s.trace.json").string();
  ASSERT_TRUE(exportAndWait(window, ExportFormat::kChromeTrace, trace)) << window.bannerText().toStdString();
  size_t gpu = 0;
  const auto events = nlohmann::json::parse(test::read_file(trace));  // named: the loop reads into it
  for (const auto& event : events["traceEvents"]) {
    const std::string cat = event.value("cat", "");
    gpu += cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
  }
  EXPECT_EQ(gpu, test::make_fixture().kernels.size());

  const std::string prefix = (dir / "tables").string();
  ASSERT_TRUE(exportAndWait(window, ExportFormat::kCsv, prefix)) << window.bannerText().toStdString();
  for (const char* table : {".ops.csv", ".kernels.csv", ".steps.csv", ".gradients.csv"})
    EXPECT_TRUE(std::filesystem::exists(prefix + table)) << table;
  EXPECT_EQ(test::read_file(prefix + ".steps.csv").rfind("step,loss,", 0), 0u);

  // A file that cannot be written: the banner says why, in one line.
  EXPECT_FALSE(exportAndWait(window, ExportFormat::kJson, (dir / "no" / "such" / "dir.json").string()));
  EXPECT_TRUE(window.bannerText().startsWith(QStringLiteral("Cannot export"))) << window.bannerText().toStdString();
}

TEST(ExportData, AComparisonExportsAsJsonOrCsvAndHasNoTraceToExport) {
  test::ScratchDir dir;
  const std::string file = (dir / "c.ampscope").string();
  write_comparison(file, test::gpu_comparison());
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  ASSERT_TRUE(testing::openAndWait(window, QString::fromStdString(file))) << window.bannerText().toStdString();
  ASSERT_TRUE(window.comparisonPageShown());
  const std::string json_path = (dir / "c.summary.json").string();
  ASSERT_TRUE(exportAndWait(window, ExportFormat::kJson, json_path)) << window.bannerText().toStdString();
  const auto j = nlohmann::json::parse(test::read_file(json_path));
  EXPECT_EQ(j["kind"], "comparison");
  const profiler::Comparison comparison = profiler::read_comparison(file);
  ASSERT_EQ(j["variants"].size(), comparison.variants.size());
  EXPECT_EQ(j["variants"][1]["step_ms"]["median"].get<double>(), profiler::summarize(comparison)[1].step_ms.median);

  EXPECT_FALSE(exportAndWait(window, ExportFormat::kChromeTrace, (dir / "c.trace.json").string()));
  EXPECT_TRUE(window.bannerText().contains(QStringLiteral("holds a precision comparison, which has no trace")))
      << window.bannerText().toStdString();
  EXPECT_FALSE(std::filesystem::exists(dir / "c.trace.json"));
}

// The save dialog's file type is the format; a CSV's name is its tables' prefix.
TEST(ExportData, TheDialogsFileTypeIsTheFormatAndACsvNameItsTablesPrefix) {
  const QStringList session = exportFilters(false), comparison = exportFilters(true);
  ASSERT_EQ(session.size(), 4);
  ASSERT_EQ(comparison.size(), 2);  // JSON and CSV: a comparison has no trace or events
  const auto format_of = [&](const QString& filter) {
    return exportChoice(filter, QStringLiteral("/x/run.csv"))->format;
  };
  EXPECT_EQ(format_of(session[0]), ExportFormat::kChromeTrace);
  EXPECT_EQ(format_of(session[3]), ExportFormat::kTensorBoard);
  EXPECT_EQ(format_of(comparison[0]), ExportFormat::kJson);
  EXPECT_EQ(format_of(comparison[1]), ExportFormat::kCsv);
  EXPECT_EQ(exportChoice(comparison[1], QStringLiteral("/x/run.csv"))->target, QStringLiteral("/x/run"));
  EXPECT_EQ(exportChoice(comparison[1], QStringLiteral("/x/run.ops.csv"))->target, QStringLiteral("/x/run"));
  EXPECT_EQ(exportChoice(session[0], QStringLiteral("/x/a.trace.json"))->target, QStringLiteral("/x/a.trace.json"));
  EXPECT_FALSE(exportChoice(QStringLiteral("Images (*.png)"), QStringLiteral("/x/a.png")));
}

}  // namespace
}  // namespace ampscope::ui
