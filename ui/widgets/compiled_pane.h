#pragma once
// torch.compile'd code (issue #28): the time inside the compiled graphs per kernel
// inductor generated, with the graph ops each computes (CompiledKernelModel), the
// share of the graphs' time the kernels cover, and dynamo's graph breaks and
// recompilations with its reasons. A saved session's (`ampscope run` of a script
// that compiles); the built-in trainer compiles nothing, so a live run clears it.
#include <QWidget>

#include "profiler/store/session_view.h"

class QLabel;
class QStackedWidget;
class QTableView;

namespace ampscope::ui {

class CompiledKernelModel;

class CompiledPane : public QWidget {
  Q_OBJECT
 public:
  explicit CompiledPane(QWidget* parent = nullptr);
  void setCompileEvents(const profiler::CompileEvents& compile);
  void clear();

  CompiledKernelModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  bool showsContent() const;
  QString summary() const;  // the text above the table
  QString events() const;   // the graph breaks and recompilations below it

 private:
  QStackedWidget* stack_ = nullptr;
  QTableView* table_ = nullptr;
  CompiledKernelModel* model_ = nullptr;
  QLabel* summary_ = nullptr;
  QLabel* events_ = nullptr;
};

}  // namespace ampscope::ui
