#include "ui/widgets/readiness_pane.h"

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "profiler/capture_option_specs.h"
#include "ui/models/model_roles.h"
#include "ui/models/readiness_model.h"
#include "ui/widgets/pane_hint.h"
#include "ui/widgets/table_view.h"

namespace ampscope::ui {

ReadinessPane::ReadinessPane(QWidget* parent) : QWidget(parent) {
  model_ = new ReadinessModel(this);
  auto* proxy = new QSortFilterProxyModel(this);
  proxy->setSourceModel(model_);
  proxy->setSortRole(SortRole);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  stack_ = new QStackedWidget;
  layout->addWidget(stack_);
  stack_->addWidget(makeHintLabel(
      tr("%1\nPrecision readiness is measured on the first gradient-sampled step (--grad-every) and one in N "
         "after it (the run panel's Readiness, --readiness-every; %2 by default, 0 = off): how each Linear and "
         "convolution layer would fare in FP8, MXFP8 and NVFP4.")
          .arg(QString::fromLatin1(kProfilerHint))
          .arg(profiler::kReadinessEveryOption.default_value)));

  auto* content = new QWidget;
  auto* column = new QVBoxLayout(content);
  column->setContentsMargins(4, 4, 4, 4);
  table_ = makeTableView(proxy);
  table_->setObjectName(QStringLiteral("readinessTable"));
  table_->sortByColumn(ReadinessModel::kLayer, Qt::AscendingOrder);  // forward order
  column->addWidget(table_, 1);
  notes_ = new QLabel;
  notes_->setObjectName(QStringLiteral("readinessNotes"));
  notes_->setWordWrap(true);
  notes_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  notes_->setForegroundRole(QPalette::PlaceholderText);
  column->addWidget(notes_);
  stack_->addWidget(content);
}

void ReadinessPane::setSnapshot(const profiler::ProfileSnapshotPtr& snapshot) {
  const bool any = snapshot && !snapshot->readiness.empty();
  if (!any) {
    model_->clear();
    notes_->clear();
    stack_->setCurrentIndex(0);
    return;
  }
  const profiler::ReadinessTotals& totals = snapshot->readiness;
  const bool first = model_->rowCount() == 0;
  model_->setTotals(totals);
  if (first) fitColumnsToContents(table_, 320);  // whole layer names, where they fit
  QStringList lines;
  const int64_t steps = totals.sampled_steps();
  lines << tr("Over %1 sampled %2, the worst of each layer's tensors; hover a cell for each tensor's SQNR, "
              "flushed and saturated share. Green: ready; amber: borderline; red: keep in bf16.")
               .arg(steps)
               .arg(steps == 1 ? tr("step") : tr("steps"));
  lines << tr("Measured: %1.").arg(QString::fromStdString(profiler::describe_measured_tensors(totals.roles())));
  for (profiler::QuantElement e : profiler::kQuantElements)
    lines << QString::fromStdString(profiler::describe_thresholds(e));
  notes_->setText(lines.join(QLatin1Char('\n')));
  stack_->setCurrentIndex(1);
}

bool ReadinessPane::showsTable() const { return stack_->currentIndex() == 1; }

QString ReadinessPane::notes() const { return notes_->text(); }

}  // namespace ampscope::ui
