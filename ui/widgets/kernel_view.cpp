#include "ui/widgets/kernel_view.h"

#include <qcustomplot.h>

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "profiler/analysis/warmup_step.h"
#include "profiler/report/report_format.h"
#include "ui/models/formatting.h"
#include "ui/models/kernel_model.h"
#include "ui/models/table_filter_proxy.h"
#include "ui/widgets/pane_hint.h"
#include "ui/widgets/plot_fitting.h"
#include "ui/widgets/plot_style.h"
#include "ui/widgets/table_view.h"

namespace ampscope::ui {

namespace {

// Kernel names are long C++ templates; the chart keeps the readable head.
QString shortKernelName(const std::string& name) {
  QString s = QString::fromStdString(name);
  const int paren = s.indexOf(QLatin1Char('('));
  if (paren > 0) s.truncate(paren);
  if (s.startsWith(QStringLiteral("void "))) s.remove(0, 5);
  if (s.size() > 34) s = s.left(33) + QStringLiteral("…");
  return s;
}

}  // namespace

KernelView::KernelView(QWidget* parent) : QWidget(parent) {
  model_ = new KernelModel(this);
  proxy_ = new TableFilterProxy(this);
  proxy_->setSourceModel(model_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  stack_ = new QStackedWidget;
  layout->addWidget(stack_);
  stack_->addWidget(
      makeHintLabel(tr("%1\nGPU kernels are traced with CUPTI on CUDA runs; a CPU run has none.")
                        .arg(QString::fromLatin1(kProfilerHint))));

  auto* content = new QWidget;
  auto* column = new QVBoxLayout(content);
  column->setContentsMargins(4, 4, 4, 4);
  search_ = new QLineEdit;
  search_->setPlaceholderText(tr("Filter by kernel or launching op"));
  search_->setClearButtonEnabled(true);
  column->addWidget(search_);
  auto* split = new QSplitter(Qt::Horizontal);
  table_ = makeTableView(proxy_);
  table_->setObjectName(QStringLiteral("kernelTable"));
  table_->sortByColumn(KernelModel::kTotal, Qt::DescendingOrder);
  split->addWidget(table_);

  chart_ = new QCustomPlot;
  chart_->setObjectName(QStringLiteral("kernelChart"));
  addPlotTitle(chart_, tr("Top %1 kernels by GPU time").arg(kTopN));
  // Horizontal bars: the key axis is the vertical one, so names read left to right.
  tensor_core_bars_ = new QCPBars(chart_->yAxis, chart_->xAxis);
  other_bars_ = new QCPBars(chart_->yAxis, chart_->xAxis);
  tensor_core_bars_->setName(tr("Tensor Core"));
  other_bars_->setName(tr("other"));
  tensor_core_bars_->setWidth(0.7);
  other_bars_->setWidth(0.7);
  chart_->xAxis->setLabel(tr("total GPU time (ms)"));
  chart_->yAxis->setRangeReversed(true);
  chart_->legend->setVisible(true);
  chart_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
  chart_->setMinimumWidth(320);
  split->addWidget(chart_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  column->addWidget(split, 1);
  attribution_ = new QLabel;
  attribution_->setObjectName(QStringLiteral("gpuAttribution"));
  attribution_->setToolTip(
      tr("GPU activity that no recorded op launched (or whose op never arrived). A high share "
         "means the op table does not account for that GPU time."));
  column->addWidget(attribution_);
  stack_->addWidget(content);

  debounce_ = new QTimer(this);
  debounce_->setSingleShot(true);
  debounce_->setInterval(200);
  connect(search_, &QLineEdit::textChanged, debounce_, qOverload<>(&QTimer::start));
  connect(debounce_, &QTimer::timeout, this, [this] { proxy_->setTextFilter(search_->text()); });
  applyPlotStyle(chart_, palette());
}

int KernelView::barCount() const {
  return tensor_core_bars_->data()->size() + other_bars_->data()->size();
}

void KernelView::setSnapshot(const profiler::ProfileSnapshotPtr& snapshot) {
  snapshot_ = snapshot;
  if (!snapshot_ || snapshot_->top_kernels.empty()) {
    model_->clear();
    stack_->setCurrentIndex(0);
    return;
  }
  const bool first = model_->rowCount() == 0;
  model_->setRows(snapshot_->top_kernels);
  stack_->setCurrentIndex(1);
  const profiler::GpuAttribution& a = snapshot_->gpu_attribution;
  QString attribution = tr("GPU time with no op: %1 ms of %2 ms traced (%3%)")
                            .arg(static_cast<double>(a.unattributed_ns) / 1e6, 0, 'f', 3)
                            .arg(static_cast<double>(a.traced_ns) / 1e6, 0, 'f', 3)
                            .arg(100.0 * a.unattributed_share(), 0, 'f', 1);
  if (snapshot_->warmup_left_out) {
    const std::string left_out =
        profiler::warmup_kernels_text(*snapshot_->warmup_left_out, a, snapshot_->profiled_steps);
    if (!left_out.empty())
      attribution += QStringLiteral("\n") + QString::fromStdString(profiler::report_detail::capitalized(left_out));
  }
  attribution_->setText(attribution);
  if (first) {
    table_->resizeColumnsToContents();
    table_->setColumnWidth(KernelModel::kName,
                           std::min(table_->columnWidth(KernelModel::kName), 300));
  }
  rebuildChart();
}

void KernelView::rebuildChart() {
  if (!snapshot_) return;
  std::vector<const profiler::KernelSummary*> top;
  for (const auto& k : snapshot_->top_kernels) top.push_back(&k);
  std::sort(top.begin(), top.end(), [](auto* a, auto* b) { return a->total_ns > b->total_ns; });
  if (top.size() > static_cast<size_t>(kTopN)) top.resize(kTopN);
  QVector<double> tc_keys, tc_values, other_keys, other_values, ticks;
  QVector<QString> labels;
  double max_ms = 0;
  for (size_t i = 0; i < top.size(); ++i) {
    const double ms = static_cast<double>(top[i]->total_ns) / 1e6;
    max_ms = std::max(max_ms, ms);
    (top[i]->tensor_core ? tc_keys : other_keys) << static_cast<double>(i);
    (top[i]->tensor_core ? tc_values : other_values) << ms;
    ticks << static_cast<double>(i);
    labels << shortKernelName(top[i]->name);
  }
  tensor_core_bars_->setData(tc_keys, tc_values);
  other_bars_->setData(other_keys, other_values);
  setFittingTextTicks(chart_->yAxis, ticks, labels);
  chart_->yAxis->setRange(-0.6, static_cast<double>(top.size()) - 0.4);
  chart_->xAxis->setRange(0, max_ms * 1.08 + 1e-6);
  const SeriesColors c = seriesColors(palette());
  tensor_core_bars_->setBrush(c.tertiary);
  tensor_core_bars_->setPen(Qt::NoPen);
  other_bars_->setBrush(c.primary);
  other_bars_->setPen(Qt::NoPen);
  chart_->replot(QCustomPlot::rpQueuedReplot);
}

void KernelView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) {
    applyPlotStyle(chart_, palette());
    rebuildChart();
  }
  QWidget::changeEvent(event);
}

}  // namespace ampscope::ui
