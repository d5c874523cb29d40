#include "ui/models/table_filter_proxy.h"

#include "ui/models/model_roles.h"

namespace ampscope::ui {

TableFilterProxy::TableFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(SortRole);
  setDynamicSortFilter(true);
}

void TableFilterProxy::setTextFilter(const QString& text) {
  QStringList words = text.split(QLatin1Char(' '), Qt::SkipEmptyParts);
  if (words == words_) return;
  words_ = std::move(words);
  invalidateRowsFilter();
}

void TableFilterProxy::setCategoryFilter(QSet<int> categories) {
  if (categories == categories_) return;
  categories_ = std::move(categories);
  invalidateRowsFilter();
}

void TableFilterProxy::setLaunchedByFilter(const QString& op) {
  if (op == launched_by_) return;
  launched_by_ = op;
  invalidateRowsFilter();
}

void TableFilterProxy::setTopLevelOnly(bool on) {
  if (on == top_level_only_) return;
  top_level_only_ = on;
  invalidateRowsFilter();
}

bool TableFilterProxy::filterAcceptsRow(int source_row, const QModelIndex& source_parent) const {
  const QModelIndex index = sourceModel()->index(source_row, 0, source_parent);
  if (top_level_only_) {
    const QVariant top = index.data(TopLevelRole);
    if (top.isValid() && !top.toBool()) return false;
  }
  if (!categories_.isEmpty() && !categories_.contains(index.data(CategoryRole).toInt()))
    return false;
  if (!launched_by_.isEmpty() && !index.data(LaunchedByRole).toStringList().contains(launched_by_) &&
      !index.data(RanInsideRole).toStringList().contains(launched_by_))
    return false;
  if (words_.isEmpty()) return true;
  const QString haystack = index.data(FilterTextRole).toString();
  for (const QString& word : words_)
    if (!haystack.contains(word, Qt::CaseInsensitive)) return false;
  return true;
}

bool TableFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  const QVariant l = left.data(SortRole);
  const QVariant r = right.data(SortRole);
  if (l.typeId() == QMetaType::QString || r.typeId() == QMetaType::QString)
    return QString::localeAwareCompare(l.toString(), r.toString()) < 0;
  return l.toDouble() < r.toDouble();
}

}  // namespace ampscope::ui
