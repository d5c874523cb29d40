#include "ui/widgets/op_explorer.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

#include "profiler/report/report_format.h"
#include "ui/models/formatting.h"
#include "ui/models/kernel_model.h"
#include "ui/models/op_stats_model.h"
#include "ui/models/table_filter_proxy.h"
#include "ui/widgets/category_strip.h"
#include "ui/widgets/pane_hint.h"
#include "ui/widgets/table_view.h"

namespace ampscope::ui {

OpExplorer::OpExplorer(QWidget* parent) : QWidget(parent) {
  model_ = new OpStatsModel(this);
  proxy_ = new TableFilterProxy(this);
  proxy_->setSourceModel(model_);
  kernel_model_ = new KernelModel(this);
  kernel_proxy_ = new TableFilterProxy(this);
  kernel_proxy_->setSourceModel(kernel_model_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  stack_ = new QStackedWidget;
  layout->addWidget(stack_);
  stack_->addWidget(makeHintLabel(
      tr("%1\nThe op table lists every op autocast saw: its category (demoted, kept fp32, "
         "promoted, cast), input → output dtypes, calls and times.")
          .arg(QString::fromLatin1(kProfilerHint))));

  auto* content = new QWidget;
  auto* column = new QVBoxLayout(content);
  column->setContentsMargins(4, 4, 4, 4);
  column->setSpacing(4);
  auto* bar = new QHBoxLayout;
  category_ = new QComboBox;
  category_->setObjectName(QStringLiteral("categoryFilter"));
  category_->addItem(tr("All categories"), -1);
  for (int i = 0; i < kCategoryCount; ++i) {
    category_->addItem(categoryLabel(categoryAt(i)), static_cast<int>(categoryAt(i)));
    category_->setItemData(i + 1, categoryTooltip(categoryAt(i)), Qt::ToolTipRole);
    category_->setItemData(i + 1, categoryColor(categoryAt(i)), Qt::DecorationRole);
  }
  search_ = new QLineEdit;
  search_->setObjectName(QStringLiteral("opSearch"));
  search_->setPlaceholderText(tr("Filter by op or module (e.g. linear blocks.0)"));
  search_->setClearButtonEnabled(true);
  bar->addWidget(category_);
  bar->addWidget(search_, 1);
  // On by default: sorted by time, autograd nodes and the ops nested in others would
  // otherwise fill the top of the table with time that the top-level rows already hold.
  top_level_ = new QCheckBox(tr("Top-level ops only"));
  top_level_->setObjectName(QStringLiteral("topLevelOnly"));
  top_level_->setChecked(true);
  top_level_->setToolTip(tr("Ops called by the model, loss or optimizer code, or by an autograd node. "
                            "Unchecked, the table adds the ops nested inside them (addmm inside linear) "
                            "and the autograd nodes; their time is already inside the top-level rows."));
  proxy_->setTopLevelOnly(true);
  bar->addWidget(top_level_);
  column->addLayout(bar);
  strip_ = new CategoryStrip;
  column->addWidget(strip_);
  table_note_ = new QLabel;
  table_note_->setObjectName(QStringLiteral("opTableNote"));
  table_note_->setWordWrap(true);
  table_note_->setForegroundRole(QPalette::PlaceholderText);  // muted: a note about the table, not data
  table_note_->hide();
  column->addWidget(table_note_);

  auto* split = new QSplitter(Qt::Vertical);
  table_ = makeTableView(proxy_);
  table_->setObjectName(QStringLiteral("opTable"));
  table_->sortByColumn(OpStatsModel::kCpuTime, Qt::DescendingOrder);
  split->addWidget(table_);
  kernels_pane_ = new QWidget;
  auto* lower_layout = new QVBoxLayout(kernels_pane_);
  lower_layout->setContentsMargins(0, 0, 0, 0);
  kernels_title_ = new QLabel(tr("Kernels of the selected op"));
  kernels_title_->setObjectName(QStringLiteral("opKernelsTitle"));
  kernels_ = makeTableView(kernel_proxy_);
  kernels_->setObjectName(QStringLiteral("opKernelTable"));
  kernels_->sortByColumn(KernelModel::kTotal, Qt::DescendingOrder);
  kernels_->horizontalHeader()->setStretchLastSection(false);
  kernels_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  kernels_->horizontalHeader()->setSectionResizeMode(KernelModel::kName, QHeaderView::Stretch);
  lower_layout->addWidget(kernels_title_);
  lower_layout->addWidget(kernels_, 1);
  split->addWidget(kernels_pane_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  column->addWidget(split, 1);
  stack_->addWidget(content);

  // Refiltering thousands of rows on every keystroke stutters; wait for a pause in typing.
  debounce_ = new QTimer(this);
  debounce_->setSingleShot(true);
  debounce_->setInterval(kFilterDebounceMs);
  connect(search_, &QLineEdit::textChanged, debounce_, qOverload<>(&QTimer::start));
  connect(debounce_, &QTimer::timeout, this, [this] { proxy_->setTextFilter(search_->text()); });
  connect(category_, &QComboBox::currentIndexChanged, this, &OpExplorer::applyCategoryFilter);
  connect(top_level_, &QCheckBox::toggled, proxy_, &TableFilterProxy::setTopLevelOnly);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &OpExplorer::showKernelsOfSelection);
  kernel_proxy_->setLaunchedByFilter(QStringLiteral("\x01"));  // nothing until an op is selected
}

void OpExplorer::applyCategoryFilter() {
  const int value = category_->currentData().toInt();
  proxy_->setCategoryFilter(value < 0 ? QSet<int>{} : QSet<int>{value});
}

void OpExplorer::showKernelsOfSelection() {
  const QModelIndex current = table_->currentIndex();
  if (!current.isValid()) {
    kernel_proxy_->setLaunchedByFilter(QStringLiteral("\x01"));
    kernels_title_->setText(tr("Kernels of the selected op"));
    return;
  }
  const QString op = proxy_->index(current.row(), OpStatsModel::kOp).data().toString();
  kernel_proxy_->setLaunchedByFilter(op);
  // A run without traced kernels (the CPU, CUPTI off) keeps the title line only, and the op
  // table the room: an empty kernel table squeezed it to two rows in a short dock.
  const bool traced = kernel_model_->rowCount() > 0;
  kernels_->setVisible(traced);
  kernels_pane_->setMaximumHeight(traced ? QWIDGETSIZE_MAX : kernels_title_->sizeHint().height());
  if (!traced && !no_trace_reason_.isEmpty())
    kernels_title_->setText(tr("Kernels of %1: none traced, GPU trace %2").arg(op, no_trace_reason_));
  else if (!traced)  // a session that does not say why (a comparison's)
    kernels_title_->setText(tr("Kernels of %1: no GPU kernels traced in this run").arg(op));
  else
    kernels_title_->setText(
        tr("Kernels of %1 and the ops it called: %n kernel(s)", nullptr, kernel_proxy_->rowCount()).arg(op));
}

QString OpExplorer::tableNote() const { return table_note_->isHidden() ? QString() : table_note_->text(); }

void OpExplorer::setSnapshot(const profiler::ProfileSnapshotPtr& snapshot) {
  if (!snapshot || snapshot->op_stats.empty()) {
    model_->clear();
    kernel_model_->clear();
    table_note_->hide();
    stack_->setCurrentIndex(0);
    return;
  }
  const bool first = model_->rowCount() == 0;
  // The session knows why no kernel was traced ("off: training on the CPU (...)", "off:
  // disabled by the user", CUPTI's own message); said, rather than guessed at.
  no_trace_reason_ = snapshot->gpu_tracing == "cupti" ? QString() : QString::fromStdString(snapshot->gpu_tracing);
  model_->setRows(snapshot->op_stats);
  // Sessions recorded before top-level marks have none: the filter would hide every row.
  const bool marked = std::any_of(snapshot->op_stats.begin(), snapshot->op_stats.end(),
                                  [](const profiler::OpStats& s) { return s.top_level; });
  top_level_->setEnabled(marked);
  proxy_->setTopLevelOnly(marked && top_level_->isChecked());
  kernel_model_->setRows(snapshot->top_kernels);
  strip_->setTotals(summarizeByCategory(snapshot->op_stats, snapshot->compiled_compute));
  QString note;
  if (snapshot->warmup_left_out) {
    note = QString::fromStdString(profiler::report_detail::capitalized(profiler::warmup_left_out_text(
               *snapshot->warmup_left_out, profiler::category_totals(snapshot->op_stats, snapshot->compiled_compute),
               snapshot->profiled_steps))) +
           QLatin1Char('.');
  }
  table_note_->setText(note);
  table_note_->setVisible(!note.isEmpty());
  stack_->setCurrentIndex(1);
  if (first) {
    fitColumnsToContents(table_, 260);
    table_->horizontalHeader()->setStretchLastSection(false);
    table_->horizontalHeader()->setSectionResizeMode(OpStatsModel::kShapes, QHeaderView::Stretch);
    table_->setCurrentIndex(proxy_->index(0, 0));  // the top op's kernels show at once
  }
  showKernelsOfSelection();
}

}  // namespace ampscope::ui
