#include "ui/widgets/ranks_page.h"

#include <qcustomplot.h>

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/models/model_roles.h"
#include "ui/models/rank_model.h"
#include "ui/models/table_filter_proxy.h"
#include "ui/widgets/plot_style.h"
#include "ui/widgets/table_view.h"

namespace ampscope::ui {
namespace {

QCustomPlot* makePlot(const QString& title, const QString& y_label, const QPalette& palette) {
  auto* plot = new QCustomPlot;
  plot->setMinimumHeight(180);
  applyPlotStyle(plot, palette);
  addPlotTitle(plot, title);
  plot->xAxis->setLabel(QObject::tr("step"));
  plot->yAxis->setLabel(y_label);
  plot->legend->setVisible(true);
  moveLegendToTitleRow(plot);
  return plot;
}

}  // namespace

RanksPage::RanksPage(QWidget* parent) : QWidget(parent) {
  model_ = new RankModel(this);
  proxy_ = new TableFilterProxy(this);
  proxy_->setSourceModel(model_);
  verdict_ = new QLabel;
  verdict_->setObjectName(QStringLiteral("rankVerdict"));
  verdict_->setWordWrap(true);
  verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  verdict_->setText(tr("Open the session files of a distributed run's ranks together "
                       "(File → Open, several FILE.rank<R>.ampscope) to compare them here."));
  table_ = makeTableView(proxy_);
  table_->sortByColumn(RankModel::kRank, Qt::AscendingOrder);
  table_->setToolTip(tr("Double-click a rank to open its session: its ops, kernels and gradients (this page "
                        "stays, a tab away)"));
  connect(table_, &QAbstractItemView::activated, this, [this](const QModelIndex& index) {
    if (const QString path = index.data(SessionPathRole).toString(); !path.isEmpty()) emit rankSessionRequested(path);
  });
  step_time_ = makePlot(tr("Step time per rank"), tr("ms"), palette());
  loss_scale_ = makePlot(tr("Loss scale per rank"), tr("loss scale"), palette());
  useLog2Axis(loss_scale_->yAxis);

  auto* plots = new QSplitter(Qt::Horizontal);
  plots->addWidget(step_time_);
  plots->addWidget(loss_scale_);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(table_);
  split->addWidget(plots);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(verdict_);
  layout->addWidget(split, 1);
}

void RanksPage::showRanks(std::shared_ptr<const profiler::ReportData> report) {
  report_ = std::move(report);
  if (!report_ || !report_->ranks) return;
  model_->setRanks(*report_->ranks);
  QStringList lines;
  for (const auto& line : report_->verdict) lines << QString::fromStdString(line);
  verdict_->setText(lines.join(QLatin1Char('\n')));
  rebuildPlots();
}

QString RanksPage::verdictText() const { return verdict_->text(); }

void RanksPage::rebuildPlots() {
  for (QCustomPlot* plot : {step_time_, loss_scale_}) plot->clearGraphs();
  if (!report_ || !report_->ranks) return;
  const SeriesColors colors = seriesColors(palette());
  const QColor cycle[] = {colors.primary, colors.secondary, colors.tertiary, colors.accent, colors.warning,
                          colors.danger};
  const auto& ranks = report_->ranks->ranks;
  for (size_t i = 0; i < ranks.size(); ++i) {
    QVector<double> x, time, scale;
    for (const auto& s : ranks[i].step_records) {
      x << static_cast<double>(s.step);
      time << s.step_time_ms;
      scale << s.loss_scale;
    }
    QPen pen(cycle[i % std::size(cycle)], 1.5);
    if (i >= std::size(cycle)) pen.setStyle(Qt::DashLine);
    const QString name = tr("rank %1").arg(ranks[i].rank);
    QCPGraph* t = step_time_->addGraph();
    t->setName(name);
    t->setPen(pen);
    t->setData(x, time, true);
    QCPGraph* l = loss_scale_->addGraph();
    l->setName(name);
    l->setPen(pen);
    l->setData(x, scale, true);
  }
  for (QCustomPlot* plot : {step_time_, loss_scale_}) plot->rescaleAxes();
  // A flat loss scale (every rank agreeing, nothing skipped) still gets a readable axis.
  const QCPRange scales = loss_scale_->yAxis->range();
  loss_scale_->yAxis->setRange(scales.lower / 2.0, scales.upper * 2.0);
  for (QCustomPlot* plot : {step_time_, loss_scale_}) plot->replot(QCustomPlot::rpQueuedReplot);
}

void RanksPage::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) {
    for (QCustomPlot* plot : {step_time_, loss_scale_}) applyPlotStyle(plot, palette());
    rebuildPlots();
  }
}

}  // namespace ampscope::ui
