#pragma once
// Precision readiness as a table (issue #30): one row per layer in forward order,
// the lowest-precision target it is ready for, then one column per simulated
// format (profiler::kQuantFormats) whose cell is the verdict and the metric that
// decided it, coloured by the verdict; a cell's tooltip has every tensor's SQNR,
// flushed and saturated share in that format. Same update rule as the other
// tables: the same layers give a dataChanged, anything else a reset.
#include <QAbstractTableModel>
#include <vector>

#include "profiler/analysis/quantization_readiness.h"

namespace ampscope::ui {

class ReadinessModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kLayer, kLowestReady, kFirstFormat, kColumnCount = kFirstFormat + profiler::kQuantFormatCount };

  explicit ReadinessModel(QObject* parent = nullptr);

  void setTotals(const profiler::ReadinessTotals& totals);
  void clear();
  const std::vector<profiler::LayerReadiness>& layers() const { return layers_; }
  static profiler::QuantFormat formatOf(int column) {
    return static_cast<profiler::QuantFormat>(column - kFirstFormat);
  }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<profiler::LayerReadiness> layers_;
};

// A verdict's colour, translucent so that text stays readable on light and dark
// palettes: green ready, amber borderline, red keep.
QColor readinessColor(profiler::Readiness verdict);

}  // namespace ampscope::ui
