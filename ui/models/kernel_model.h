#pragma once
// The kernel table: one row per profiler::KernelSummary (a GPU kernel name with
// its calls and times). Same update rule as OpStatsModel: unchanged keys give a
// dataChanged, anything else a reset.
#include <QAbstractTableModel>
#include <vector>

#include "profiler/analysis/profile_snapshot.h"

namespace ampscope::ui {

class KernelModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    kName,
    kCalls,
    kTotal,
    kMean,
    kMax,
    kShare,
    kGrid,
    kBlock,
    kTensorCore,
    kLaunchedBy,
    kColumnCount
  };

  explicit KernelModel(QObject* parent = nullptr);

  void setRows(std::vector<profiler::KernelSummary> rows);
  void clear();
  const profiler::KernelSummary& row(int r) const { return rows_[static_cast<size_t>(r)]; }
  const std::vector<profiler::KernelSummary>& rows() const { return rows_; }
  int64_t totalNs() const { return total_ns_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::vector<profiler::KernelSummary> rows_;
  int64_t total_ns_ = 0;
};

}  // namespace ampscope::ui
