#pragma once
// The table look shared by the panes: row selection, numeric columns right
// aligned by the models, sortable headers, compact rows.
#include <QTableView>

namespace ampscope::ui {

QTableView* makeTableView(QAbstractItemModel* model, QWidget* parent = nullptr);

}  // namespace ampscope::ui
