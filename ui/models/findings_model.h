#pragma once
// The report's recommendations of the shown session as a tree: a row per recommendation
// (warnings first, then by impact, as recommend() orders them), its evidence lines as
// children. The title is the display text, the detail (what was seen, what to do) the tooltip
// and DetailRole; SeverityRole and FindingIdRole say which it is, a swatch its severity.
#include <QAbstractItemModel>
#include <QColor>
#include <vector>

#include "profiler/report/recommendations.h"

namespace ampscope::ui {

class FindingsModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  explicit FindingsModel(QObject* parent = nullptr);

  void setRecommendations(std::vector<profiler::Recommendation> recommendations);
  const std::vector<profiler::Recommendation>& recommendations() const { return recommendations_; }

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  // A recommendation's row has internal id 0; an evidence line's, its recommendation's row + 1.
  std::vector<profiler::Recommendation> recommendations_;
};

// A severity's swatch: amber for a warning, blue for information.
QColor severityColor(profiler::Severity severity);

}  // namespace ampscope::ui
