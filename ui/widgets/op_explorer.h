#pragma once
// The op table: what autocast did to every op (category, input → output
// dtypes), its calls and times, Tensor Core share and cast tax; filtered by
// category and by text (debounced), with a summary strip and the kernels the
// selected op launched.
#include <QString>
#include <QWidget>

#include "profiler/analysis/profile_snapshot.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QStackedWidget;
class QTableView;
class QTimer;

namespace ampscope::ui {

class CategoryStrip;
class KernelModel;
class OpStatsModel;
class TableFilterProxy;

class OpExplorer : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kFilterDebounceMs = 200;

  explicit OpExplorer(QWidget* parent = nullptr);

  void setSnapshot(const profiler::ProfileSnapshotPtr& snapshot);
  // The line under the summary strip saying what the table leaves out (the warm-up step,
  // warmup_left_out_text) while shown, else "".
  QString tableNote() const;

  OpStatsModel* model() const { return model_; }
  TableFilterProxy* proxy() const { return proxy_; }
  QLineEdit* searchField() const { return search_; }
  QComboBox* categoryFilter() const { return category_; }
  QCheckBox* topLevelOnly() const { return top_level_; }
  QTableView* table() const { return table_; }
  TableFilterProxy* kernelProxy() const { return kernel_proxy_; }
  CategoryStrip* summary() const { return strip_; }

 private:
  void applyCategoryFilter();
  void showKernelsOfSelection();

  QStackedWidget* stack_ = nullptr;
  QComboBox* category_ = nullptr;
  QCheckBox* top_level_ = nullptr;
  QLineEdit* search_ = nullptr;
  QTimer* debounce_ = nullptr;
  CategoryStrip* strip_ = nullptr;
  QTableView* table_ = nullptr;
  OpStatsModel* model_ = nullptr;
  TableFilterProxy* proxy_ = nullptr;
  QLabel* table_note_ = nullptr;
  QLabel* kernels_title_ = nullptr;
  QTableView* kernels_ = nullptr;
  QWidget* kernels_pane_ = nullptr;  // kernels_title_ over kernels_, under the op table
  KernelModel* kernel_model_ = nullptr;
  TableFilterProxy* kernel_proxy_ = nullptr;
  QString no_trace_reason_;  // the session's gpu_tracing where it traced nothing
};

}  // namespace ampscope::ui
