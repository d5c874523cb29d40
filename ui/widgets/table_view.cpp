#include "ui/widgets/table_view.h"

#include <QHeaderView>
#include <algorithm>

namespace ampscope::ui {

QTableView* makeTableView(QAbstractItemModel* model, QWidget* parent) {
  auto* view = new QTableView(parent);
  styleTableView(view, model);
  return view;
}

void styleTableView(QTableView* view, QAbstractItemModel* model) {
  view->setModel(model);
  view->setSortingEnabled(true);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->setSelectionMode(QAbstractItemView::SingleSelection);
  view->setAlternatingRowColors(true);
  view->setWordWrap(false);
  view->setTextElideMode(Qt::ElideMiddle);
  view->verticalHeader()->setVisible(false);
  view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
  view->horizontalHeader()->setHighlightSections(false);
  view->horizontalHeader()->setStretchLastSection(true);
  view->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
}

void fitColumnsToContents(QTableView* view, int max_width) {
  view->resizeColumnsToContents();
  for (int c = 0; c < view->model()->columnCount(); ++c)
    view->setColumnWidth(c, std::min(view->columnWidth(c), max_width));
}

}  // namespace ampscope::ui
