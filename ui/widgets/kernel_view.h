#pragma once
// GPU kernels: the table of every traced kernel and a bar chart of the top N by
// total GPU time, Tensor Core kernels in their own color.
#include <QWidget>

#include "profiler/analysis/profile_snapshot.h"

class QCustomPlot;
class QLabel;
class QCPBars;
class QLineEdit;
class QStackedWidget;
class QTableView;
class QTimer;

namespace ampscope::ui {

class KernelModel;
class TableFilterProxy;

class KernelView : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kTopN = 12;

  explicit KernelView(QWidget* parent = nullptr);
  void setSnapshot(const profiler::ProfileSnapshotPtr& snapshot);

  KernelModel* model() const { return model_; }
  TableFilterProxy* proxy() const { return proxy_; }
  QCustomPlot* chart() const { return chart_; }
  int barCount() const;

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void rebuildChart();

  profiler::ProfileSnapshotPtr snapshot_;
  QStackedWidget* stack_ = nullptr;
  QLineEdit* search_ = nullptr;
  QTimer* debounce_ = nullptr;
  QTableView* table_ = nullptr;
  KernelModel* model_ = nullptr;
  TableFilterProxy* proxy_ = nullptr;
  QCustomPlot* chart_ = nullptr;
  QCPBars* tensor_core_bars_ = nullptr;
  QCPBars* other_bars_ = nullptr;
  QLabel* attribution_ = nullptr;
};

}  // namespace ampscope::ui
