#include "ui/widgets/diff_window.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/models/eager_vs_compiled_model.h"
#include "ui/models/formatting.h"
#include "ui/models/model_roles.h"

namespace ampscope::ui {
namespace {

QString ms(double v) { return v > 0 ? QStringLiteral("%1 ms").arg(v, 0, 'f', 3) : QStringLiteral("—"); }

}  // namespace

DiffWindow::DiffWindow(QWidget* parent) : QWidget(parent, Qt::Window) {
  setWindowTitle(tr("Eager and compiled runs"));
  model_ = new EagerVsCompiledModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(SortRole);
  summary_ = new QLabel;
  summary_->setTextFormat(Qt::RichText);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  table_ = new QTableView;
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addWidget(table_, 1);
  resize(1000, 640);
}

void DiffWindow::setDiff(const profiler::EagerVsCompiled& d, const QString& eager_path, const QString& compiled_path) {
  // Differences first, then the one-sided rows, then the matches; by module within.
  std::vector<profiler::ModulePrecision> rows = d.modules;
  const auto rank = [](profiler::Agreement a) {
    switch (a) {
      case profiler::Agreement::kDiffers: return 0;
      case profiler::Agreement::kEagerOnly: return 1;
      case profiler::Agreement::kCompiledOnly: return 2;
      case profiler::Agreement::kSame: return 3;
    }
    return 4;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const auto& x, const auto& y) { return rank(x.agreement) < rank(y.agreement); });
  model_->setRows(std::move(rows));
  table_->sortByColumn(-1, Qt::AscendingOrder);  // the model's order until the user sorts
  table_->resizeColumnsToContents();

  QString text = tr("<b>Eager</b> %1 &nbsp; <b>compiled</b> %2<br>")
                     .arg(QFileInfo(eager_path).fileName().toHtmlEscaped(),
                          QFileInfo(compiled_path).fileName().toHtmlEscaped());
  if (!d.compiled_run_has_graphs)
    text += tr("<i>The second session holds no op read from a compiled graph: was it run under torch.compile, "
               "through <code>ampscope run</code>?</i><br>");
  text += tr("Step time: eager %1, compiled %2").arg(ms(d.eager_step_ms), ms(d.compiled_step_ms));
  if (const auto s = d.speedup()) text += tr(" (<b>%1×</b>)").arg(*s, 0, 'f', 2);
  text += tr("<br>Per step, by phase (median over the recorded steps; CPU, GPU where traced):");
  for (const auto& p : d.phases) {
    text += QStringLiteral("<br>&nbsp;&nbsp;%1: %2 → %3")
                .arg(phaseLabel(p.phase), ms(p.eager_cpu_ms), ms(p.compiled_cpu_ms));
    if (p.eager_gpu_ms > 0 || p.compiled_gpu_ms > 0)
      text += tr(", GPU %1 → %2").arg(ms(p.eager_gpu_ms), ms(p.compiled_gpu_ms));
  }
  if (!d.regions.empty()) {
    text += tr("<br>Compiled regions (median call; the first recorded call, which compiled when it was the run's "
               "first):");
    for (const auto& r : d.regions)
      text += tr("<br>&nbsp;&nbsp;%1 (%2, %3 calls): %4, first %5")
                  .arg(QString::fromStdString(r.name).toHtmlEscaped(), phaseLabel(r.phase))
                  .arg(r.calls)
                  .arg(ms(r.median_ms), ms(r.first_call_ms));
  }
  text += tr("<br><b>Precision per module</b>: %1 same, %2 differ, %3 eager only, %4 compiled only")
              .arg(d.same)
              .arg(d.differs)
              .arg(d.eager_only)
              .arg(d.compiled_only);
  summary_->setText(text);
}

QString DiffWindow::summary() const { return summary_->text(); }

}  // namespace ampscope::ui
