#pragma once
// Sorting and filtering for the ampscope tables. Sorting uses SortRole (raw
// numbers); the text filter matches FilterTextRole (case-insensitive substring,
// every whitespace-separated word must match); the category filter keeps rows
// whose CategoryRole is in the set, and an empty set keeps every row.
#include <QSet>
#include <QSortFilterProxyModel>
#include <QStringList>

namespace ampscope::ui {

class TableFilterProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit TableFilterProxy(QObject* parent = nullptr);

  void setTextFilter(const QString& text);
  QString textFilter() const { return words_.join(QLatin1Char(' ')); }
  void setCategoryFilter(QSet<int> categories);  // int(profiler::OpCategory)
  // Rows whose LaunchedByRole or RanInsideRole list holds op exactly (the op's kernels,
  // its children's included); empty: no such filter.
  void setLaunchedByFilter(const QString& op);
  // Only rows whose TopLevelRole is true (rows without the role pass): hides nested
  // ops (addmm inside linear) and autograd nodes, whose time the top-level rows hold.
  void setTopLevelOnly(bool on);
  bool topLevelOnly() const { return top_level_only_; }

 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  QStringList words_;
  QSet<int> categories_;
  QString launched_by_;
  bool top_level_only_ = false;
};

}  // namespace ampscope::ui
