#pragma once
// Precision readiness (issue #30): the layers x formats table (ReadinessModel),
// a heat map coloured by verdict, with the tensors measured and the thresholds
// said below it. Fed like the other panes: the live run's snapshots and a saved
// session's (its SessionView made a snapshot).
#include <QWidget>

#include "profiler/analysis/profile_snapshot.h"

class QLabel;
class QStackedWidget;
class QTableView;

namespace ampscope::ui {

class ReadinessModel;

class ReadinessPane : public QWidget {
  Q_OBJECT
 public:
  explicit ReadinessPane(QWidget* parent = nullptr);
  void setSnapshot(const profiler::ProfileSnapshotPtr& snapshot);

  ReadinessModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  bool showsTable() const;
  // What the text under the table says: sampled steps, tensors measured, thresholds.
  QString notes() const;

 private:
  QStackedWidget* stack_ = nullptr;
  QTableView* table_ = nullptr;
  ReadinessModel* model_ = nullptr;
  QLabel* notes_ = nullptr;
};

}  // namespace ampscope::ui
