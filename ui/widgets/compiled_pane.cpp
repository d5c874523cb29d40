#include "ui/widgets/compiled_pane.h"

#include <QLabel>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "profiler/analysis/compiled_kernels_text.h"
#include "profiler/number_text.h"
#include "ui/models/compiled_kernel_model.h"
#include "ui/models/model_roles.h"
#include "ui/models/table_filter_proxy.h"
#include "ui/widgets/pane_hint.h"
#include "ui/widgets/table_view.h"

namespace ampscope::ui {
namespace {

QLabel* noteLabel(const char* object_name) {
  auto* l = new QLabel;
  l->setObjectName(QString::fromLatin1(object_name));
  l->setWordWrap(true);
  l->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return l;
}

}  // namespace

CompiledPane::CompiledPane(QWidget* parent) : QWidget(parent) {
  model_ = new CompiledKernelModel(this);
  auto* proxy = new TableFilterProxy(this);
  proxy->setSourceModel(model_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  stack_ = new QStackedWidget;
  layout->addWidget(stack_);
  stack_->addWidget(makeHintLabel(
      tr("No torch.compile'd code in this session.\nOpen a session that `ampscope run` recorded from a script that "
         "compiles its model: the time inside the compiled graphs per kernel inductor generated, with the graph "
         "ops each computes, and dynamo's graph breaks and recompilations.")));

  auto* content = new QWidget;
  auto* column = new QVBoxLayout(content);
  column->setContentsMargins(4, 4, 4, 4);
  summary_ = noteLabel("compiledSummary");
  column->addWidget(summary_);
  table_ = makeTableView(proxy);
  table_->setObjectName(QStringLiteral("compiledKernelTable"));
  table_->sortByColumn(CompiledKernelModel::kCpuTime, Qt::DescendingOrder);
  column->addWidget(table_, 1);
  events_ = noteLabel("compiledEvents");
  events_->setForegroundRole(QPalette::PlaceholderText);
  column->addWidget(events_);
  stack_->addWidget(content);
}

void CompiledPane::clear() { setCompileEvents({}); }

void CompiledPane::setCompileEvents(const profiler::CompileEvents& compile) {
  model_->setRows(compile.kernels);
  if (!compile.any()) {
    summary_->clear();
    events_->clear();
    stack_->setCurrentIndex(0);
    return;
  }
  QString summary = QString::fromStdString(profiler::graphs_read_text(compile.graphs));
  summary[0] = summary[0].toUpper();
  summary += compile.graphs > 0
                 ? tr("; their ops, as autocast traced them, are in the Ops pane marked \"compiled\".")
                 : QStringLiteral(".");
  if (!compile.kernels.empty()) {
    const profiler::CompiledTimeShare share = profiler::compiled_time_share(compile.kernels);
    // On a GPU the kernels' GPU time is what the user came for; on the CPU their CPU time.
    table_->sortByColumn(share.gpu_graph_ns > 0 ? CompiledKernelModel::kGpuTime : CompiledKernelModel::kCpuTime,
                         Qt::DescendingOrder);
    summary += QLatin1Char('\n') +
               tr("Inside the compiled graphs: %1 CPU%2 on profiled steps, %3.")
                   .arg(QString::fromStdString(profiler::text::ns_as_ms(static_cast<double>(share.graph_ns))),
                        share.gpu_graph_ns > 0
                            ? tr(" and %1 GPU").arg(QString::fromStdString(
                                  profiler::text::ns_as_ms(static_cast<double>(share.gpu_graph_ns))))
                            : QString(),
                        QString::fromStdString(profiler::compiled_share_text(share)));
  } else if (compile.graphs > 0) {
    summary += QLatin1Char('\n') + tr("No kernel times: the session was recorded without inductor's kernel profiling.");
  }
  summary_->setText(summary);
  QStringList events;
  for (const profiler::GraphBreak& b : compile.graph_breaks)
    events << tr("Graph break at %1 (%2×): %3")
                  .arg(QString::fromStdString(b.where))
                  .arg(b.count)
                  .arg(QString::fromStdString(b.reason));
  for (const profiler::Recompilation& r : compile.recompilations)
    events << tr("Recompiled %1: %2").arg(QString::fromStdString(r.frame), QString::fromStdString(r.reason));
  if (QString eager = QString::fromStdString(profiler::ran_eagerly_text(compile.ran_eagerly)); !eager.isEmpty()) {
    eager[0] = eager[0].toUpper();
    events.prepend(eager + QLatin1Char('.'));
  }
  events_->setText(events.isEmpty() ? tr("No graph breaks, no recompilations.") : events.join(QLatin1Char('\n')));
  stack_->setCurrentIndex(1);
}

bool CompiledPane::showsContent() const { return stack_->currentIndex() == 1; }

QString CompiledPane::summary() const { return summary_->text(); }

QString CompiledPane::events() const { return events_->text(); }

}  // namespace ampscope::ui
