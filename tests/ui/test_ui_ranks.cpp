// The ranks of a distributed run in the GUI: several rank files open together onto
// the Ranks page, with the report's verdict (the straggler named), a row per rank,
// and step time and loss scale per rank plotted.
#include <qcustomplot.h>

#include <QAbstractItemModelTester>
#include <QTabWidget>
#include <QTableView>

#include "profiler/report/report_data.h"
#include "tests/support/rank_sessions.h"
#include "tests/ui/qt_test_env.h"
#include "ui/models/model_roles.h"
#include "ui/models/rank_model.h"
#include "ui/models/store_session_io.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/ranks_page.h"

namespace ampscope::ui {
namespace {

TEST(RankModel, RowsAreRanksWithRawSortValuesAndTheStragglerMarked) {
  test::ScratchDir dir;
  const auto report = profiler::rank_report({test::write_rank(dir, 1, 6, 20.0, 0, 2'000'000),
                                             test::write_rank(dir, 0, 6, 10.0, 0, 1'000'000)});
  RankModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setRanks(*report.ranks);
  ASSERT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.index(0, RankModel::kRank).data().toString(), QStringLiteral("0"));
  EXPECT_EQ(model.index(1, RankModel::kVsFastest).data().toString(), QStringLiteral("2.00×"));
  EXPECT_DOUBLE_EQ(model.index(1, RankModel::kMedianStep).data(SortRole).toDouble(), 20.0);
  EXPECT_EQ(model.index(1, RankModel::kCollectives).data(SortRole).toLongLong(), 2'000'000);
  // The straggler's factor is called out; the other rank's is not.
  EXPECT_TRUE(model.index(1, RankModel::kVsFastest).data(Qt::ForegroundRole).isValid());
  EXPECT_FALSE(model.index(0, RankModel::kVsFastest).data(Qt::ForegroundRole).isValid());
  EXPECT_EQ(model.index(1, RankModel::kFile).data().toString(), QStringLiteral("run.rank1.ampscope"));
  model.setRanks({});
  EXPECT_EQ(model.rowCount(), 0);
}

TEST(RanksPage, SeveralRankFilesOpenOntoTheRanksPage) {
  test::ScratchDir dir;
  const QStringList paths = {QString::fromStdString(test::write_rank(dir, 0, 8, 10.0, 3, 1'000'000)),
                             QString::fromStdString(test::write_rank(dir, 1, 8, 13.0, 3, 1'000'000))};
  StoreSessionIO io;
  MainWindow window(MainWindow::Options{.restore_layout = false});
  window.setSessionIO(&io);
  window.show();
  auto* pages = window.findChild<QTabWidget*>(QStringLiteral("pages"));
  ASSERT_NE(pages, nullptr);
  EXPECT_FALSE(pages->isTabVisible(pages->indexOf(window.ranksPage())));  // until rank files are opened
  bool opened = false;
  QObject::connect(&window, &MainWindow::fileOpened, [&](const QString&, bool ok) { opened = ok; });
  ASSERT_TRUE(window.openSessions(paths));
  ASSERT_TRUE(testing::waitUntil([&] { return opened; })) << window.bannerText().toStdString();
  EXPECT_EQ(pages->currentWidget(), window.ranksPage());
  EXPECT_TRUE(pages->isTabVisible(pages->indexOf(window.ranksPage())));
  RanksPage* page = window.ranksPage();
  EXPECT_EQ(page->model()->rowCount(), 2);
  EXPECT_TRUE(page->verdictText().contains(QStringLiteral("Rank 1 is the straggler"))) << page->verdictText().toStdString();
  EXPECT_TRUE(page->verdictText().contains(QStringLiteral("same on every rank"))) << page->verdictText().toStdString();
  ASSERT_EQ(page->stepTimePlot()->graphCount(), 2);
  EXPECT_EQ(page->stepTimePlot()->graph(1)->dataCount(), 8);
  EXPECT_EQ(page->stepTimePlot()->graph(1)->data()->at(0)->value, 13.0);
  ASSERT_EQ(page->lossScalePlot()->graphCount(), 2);
  EXPECT_EQ(page->lossScalePlot()->graph(0)->data()->at(2)->value, 32768.0);  // halved at step 3

  // The straggler's row opens its session (its ops and kernels say why); the ranks stay a tab away.
  QString shown;
  const auto shown_connection =
      QObject::connect(&window, &MainWindow::fileOpened, [&](const QString& path, bool ok) { shown = ok ? path : ""; });
  const QModelIndex straggler = page->table()->model()->index(1, RankModel::kVsFastest);
  ASSERT_EQ(straggler.siblingAtColumn(RankModel::kRank).data(SortRole).toLongLong(), 1) << "sorted by rank";
  emit page->table()->activated(straggler);
  ASSERT_TRUE(testing::waitUntil([&] { return !shown.isEmpty(); })) << window.bannerText().toStdString();
  EXPECT_EQ(shown, paths[1]);
  EXPECT_NE(pages->currentWidget(), window.ranksPage());
  EXPECT_EQ(io.shownSessionPath(), paths[1].toStdString()) << "the session shown is rank 1's";
  EXPECT_TRUE(pages->isTabVisible(pages->indexOf(window.ranksPage())));
  EXPECT_EQ(page->model()->rowCount(), 2);
  QObject::disconnect(shown_connection);

  // A missing rank file is a message, not a half-shown page.
  const QStringList bad = {paths.front(), QString::fromStdString((dir / "run.rank7.ampscope").string())};
  bool failed = false;
  QObject::connect(&window, &MainWindow::fileOpened, [&](const QString&, bool ok) { failed = !ok; });
  ASSERT_TRUE(window.openSessions(bad));
  ASSERT_TRUE(testing::waitUntil([&] { return failed; }));
  EXPECT_TRUE(window.bannerText().contains(QStringLiteral("run.rank7.ampscope"))) << window.bannerText().toStdString();
  EXPECT_EQ(page->model()->rowCount(), 2);  // the ranks shown before stay
}

}  // namespace
}  // namespace ampscope::ui
