#pragma once
// The table look shared by the panes: row selection, numeric columns right
// aligned by the models, sortable headers, compact rows.
#include <QTableView>

namespace ampscope::ui {

QTableView* makeTableView(QAbstractItemModel* model, QWidget* parent = nullptr);
// The same look for a view made elsewhere (a .ui form).
void styleTableView(QTableView* view, QAbstractItemModel* model);

}  // namespace ampscope::ui
