#pragma once
// The eager and the compiled run of one model side by side (issue 28): a window of
// its own (File → Compare eager and compiled runs…), with the step and phase times,
// the compiled regions, and per module the dtypes autocast ran its GEMMs,
// convolutions and attention in (EagerVsCompiledModel), differences first. What
// `ampscope diff` prints, from the same loader (profiler::diff_sessions), read off
// the GUI thread by FileLoader::openDiff.
#include <QWidget>
#include <memory>

#include "profiler/analysis/eager_vs_compiled.h"

class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace ampscope::ui {

class EagerVsCompiledModel;

class DiffWindow : public QWidget {
  Q_OBJECT
 public:
  explicit DiffWindow(QWidget* parent = nullptr);
  void setDiff(const profiler::EagerVsCompiled& diff, const QString& eager_path, const QString& compiled_path);

  EagerVsCompiledModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  QString summary() const;  // the text above the table

 private:
  EagerVsCompiledModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  QTableView* table_ = nullptr;
  QLabel* summary_ = nullptr;
};

}  // namespace ampscope::ui
