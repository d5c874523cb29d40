#pragma once
// The ranks of a distributed run, a row each (profiler::compare_ranks): steps,
// median step time and how it compares with the fastest rank (stragglers), steps
// GradScaler skipped, the last loss scale, and the time in collectives.
#include <QAbstractTableModel>

#include "profiler/store/rank_comparison.h"

namespace ampscope::ui {

class RankModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    kRank,
    kSteps,
    kMedianStep,
    kVsFastest,
    kSkipped,
    kLastLossScale,
    kCollectives,
    kCollectiveShare,
    kFile,
    kColumnCount
  };

  explicit RankModel(QObject* parent = nullptr);

  void setRanks(profiler::RankComparison ranks);
  const profiler::RankComparison& ranks() const { return ranks_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  QVariant display(const profiler::RankRow& row, int column) const;
  QVariant sortValue(const profiler::RankRow& row, int column) const;
  bool isStraggler(int row) const;
  profiler::RankComparison ranks_;
};

}  // namespace ampscope::ui
