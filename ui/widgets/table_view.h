#pragma once
// The table look shared by the panes: row selection, numeric columns right
// aligned by the models, sortable headers, compact rows.
#include <QTableView>

namespace ampscope::ui {

QTableView* makeTableView(QAbstractItemModel* model, QWidget* parent = nullptr);
// The same look for a view made elsewhere (a .ui form).
void styleTableView(QTableView* view, QAbstractItemModel* model);
// Each column as wide as its header and rows need, up to max_width pixels (names are
// elided in the middle past that): for a table's first rows, before the user sizes it.
void fitColumnsToContents(QTableView* view, int max_width);

}  // namespace ampscope::ui
