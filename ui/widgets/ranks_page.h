#pragma once
// The ranks of a distributed run (File → Open with several FILE.rank<R>.ampscope
// files, or `ampscope-ui a.rank0.ampscope a.rank1.ampscope`): the verdict
// (straggler, loss-scale agreement, collectives), a row per rank, and step time
// and loss scale per rank over the steps. The data is the HTML report's
// (profiler::rank_report), read off the GUI thread by the FileLoader.
#include <QWidget>
#include <memory>

#include "profiler/report/report_data.h"

class QCustomPlot;
class QLabel;
class QTableView;

namespace ampscope::ui {

class RankModel;
class TableFilterProxy;

class RanksPage : public QWidget {
  Q_OBJECT
 public:
  explicit RanksPage(QWidget* parent = nullptr);

  // report.kind == kRanks.
  void showRanks(std::shared_ptr<const profiler::ReportData> report);
  RankModel* model() const { return model_; }
  QString verdictText() const;
  QCustomPlot* stepTimePlot() const { return step_time_; }
  QCustomPlot* lossScalePlot() const { return loss_scale_; }
  QTableView* table() const { return table_; }

 signals:
  // A rank's row was activated (double-click, Enter): open its session, to see why it is slow.
  void rankSessionRequested(const QString& path);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void rebuildPlots();

  std::shared_ptr<const profiler::ReportData> report_;
  RankModel* model_ = nullptr;
  TableFilterProxy* proxy_ = nullptr;
  QLabel* verdict_ = nullptr;
  QTableView* table_ = nullptr;
  QCustomPlot* step_time_ = nullptr;
  QCustomPlot* loss_scale_ = nullptr;
};

}  // namespace ampscope::ui
