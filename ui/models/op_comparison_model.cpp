#include "ui/models/op_comparison_model.h"

#include <QBrush>
#include <QFont>
#include <cmath>

#include "ui/models/formatting.h"
#include "ui/models/model_roles.h"

namespace ampscope::ui {
namespace {

using profiler::OpComparisonRow;
using profiler::OpVariantCell;

const OpVariantCell* cellOf(const OpComparisonRow& row, int variant) {
  if (variant < 0 || static_cast<size_t>(variant) >= row.cells.size()) return nullptr;
  const OpVariantCell& c = row.cells[static_cast<size_t>(variant)];
  return c.present ? &c : nullptr;
}

double speedupOf(const OpComparisonRow& row, int variant) {
  if (variant < 0 || static_cast<size_t>(variant) >= row.speedup.size()) return 0.0;
  return row.speedup[static_cast<size_t>(variant)];
}

int64_t ns(double value) { return static_cast<int64_t>(std::llround(value)); }

QString categoryText(const OpVariantCell& cell) {
  const auto c = profiler::parse_category(cell.category);
  return c ? categoryLabel(*c) : QString::fromStdString(cell.category);
}

}  // namespace

OpComparisonModel::OpComparisonModel(QObject* parent) : QAbstractTableModel(parent) {
  columns_ = {{ColumnKind::kOp}, {ColumnKind::kModule}, {ColumnKind::kPhase}, {ColumnKind::kShapes}};
}

void OpComparisonModel::setComparison(const profiler::Comparison& comparison, std::vector<OpComparisonRow> rows) {
  QStringList variants;
  for (const auto& v : comparison.variants) variants << QString::fromStdString(v.variant);
  const auto base = profiler::baseline_index(comparison);
  const int baseline = base ? static_cast<int>(*base) : -1;
  // The numbers before the shapes: shapes are long and the table is seldom wide enough for all.
  std::vector<ColumnSpec> columns = {{ColumnKind::kOp}, {ColumnKind::kModule}, {ColumnKind::kPhase}};
  for (int v = 0; v < variants.size(); ++v) columns.push_back({ColumnKind::kTime, v});
  for (int v = 0; v < variants.size(); ++v) {
    if (v == baseline) continue;
    columns.push_back({ColumnKind::kCategory, v});
    columns.push_back({ColumnKind::kCastTax, v});
    if (baseline >= 0) columns.push_back({ColumnKind::kSpeedup, v});
  }
  columns.push_back({ColumnKind::kShapes});
  beginResetModel();
  rows_ = std::move(rows);
  variants_ = std::move(variants);
  baseline_ = baseline;
  columns_ = std::move(columns);
  endResetModel();
}

void OpComparisonModel::clear() {
  profiler::Comparison empty;
  setComparison(empty, {});
}

int OpComparisonModel::findColumn(ColumnKind kind, const QString& variant) const {
  const int v = variant.isEmpty() ? -1 : static_cast<int>(variants_.indexOf(variant));
  for (size_t c = 0; c < columns_.size(); ++c)
    if (columns_[c].kind == kind && columns_[c].variant == v) return static_cast<int>(c);
  return -1;
}

int OpComparisonModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int OpComparisonModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(columns_.size());
}

QVariant OpComparisonModel::display(const OpComparisonRow& row, const ColumnSpec& column) const {
  const QString none = QStringLiteral("—");
  const OpVariantCell* cell = cellOf(row, column.variant);
  switch (column.kind) {
    case ColumnKind::kOp:
      return QString::fromStdString(row.name);
    case ColumnKind::kModule:
      return QString::fromStdString(row.module);
    case ColumnKind::kPhase:
      return phaseLabel(row.phase);
    case ColumnKind::kShapes:
      return shapesText(row.input_shapes);
    case ColumnKind::kTime:
      return cell ? formatDuration(ns(cell->time_ns_per_step)) : none;
    case ColumnKind::kCategory:
      return cell ? categoryText(*cell) : none;
    case ColumnKind::kCastTax:
      return cell && cell->cast_ns_per_step > 0 ? formatDuration(ns(cell->cast_ns_per_step)) : none;
    case ColumnKind::kSpeedup: {
      const double x = speedupOf(row, column.variant);
      return x > 0 ? QStringLiteral("%1×").arg(x, 0, 'f', 2) : none;
    }
  }
  return {};
}

QVariant OpComparisonModel::sortValue(const OpComparisonRow& row, const ColumnSpec& column) const {
  const OpVariantCell* cell = cellOf(row, column.variant);
  switch (column.kind) {
    case ColumnKind::kOp:
    case ColumnKind::kModule:
    case ColumnKind::kPhase:
    case ColumnKind::kShapes:
    case ColumnKind::kCategory:
      return display(row, column);
    case ColumnKind::kTime:
      return cell ? cell->time_ns_per_step : -1.0;
    case ColumnKind::kCastTax:
      return cell ? cell->cast_ns_per_step : -1.0;
    case ColumnKind::kSpeedup: {
      const double x = speedupOf(row, column.variant);
      return x > 0 ? x : -1.0;
    }
  }
  return {};
}

QVariant OpComparisonModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const OpComparisonRow& row = rows_[static_cast<size_t>(index.row())];
  const ColumnSpec& column = columns_[static_cast<size_t>(index.column())];
  switch (role) {
    case Qt::DisplayRole:
      return display(row, column);
    case SortRole:
      return sortValue(row, column);
    case FilterTextRole:
      return QStringLiteral("%1 %2 %3")
          .arg(QString::fromStdString(row.name), QString::fromStdString(row.module), phaseLabel(row.phase));
    case Qt::TextAlignmentRole:
      return column.kind == ColumnKind::kTime || column.kind == ColumnKind::kCastTax ||
                     column.kind == ColumnKind::kSpeedup
                 ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                 : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::ForegroundRole:
      if (column.kind == ColumnKind::kSpeedup && speedupOf(row, column.variant) > 0)
        return QBrush(speedupColor(speedupOf(row, column.variant)));
      if (column.kind == ColumnKind::kCategory)
        if (const OpVariantCell* cell = cellOf(row, column.variant))
          if (const auto c = profiler::parse_category(cell->category)) return QBrush(categoryColor(*c));
      return {};
    case Qt::FontRole:
      if (column.kind == ColumnKind::kSpeedup) {
        QFont f;
        f.setBold(true);
        return f;
      }
      return {};
    case Qt::ToolTipRole: {
      const OpVariantCell* cell = cellOf(row, column.variant);
      if (column.kind == ColumnKind::kShapes) return shapesText(row.input_shapes);
      if (column.kind == ColumnKind::kCategory && cell) {
        const auto c = profiler::parse_category(cell->category);
        return QStringLiteral("%1\n%2 → %3")
            .arg(c ? categoryTooltip(*c) : QString(), variants_.value(column.variant),
                 dtypeFlow(cell->input_dtypes, {}));
      }
      if (column.kind == ColumnKind::kTime && cell)
        return tr("%1 calls per step; %2 in the profiled pass, cast tax included")
            .arg(cell->calls_per_step, 0, 'f', 1)
            .arg(cell->per_step_median ? tr("the median over the profiled steps")
                                       : tr("the mean over the profiled steps (the op did not run in every one)"));
      if (column.kind == ColumnKind::kSpeedup && speedupOf(row, column.variant) > 0)
        return tr("%1's time for this op over %2's (per step, the cast tax included); above 1× %2 gained.")
            .arg(variants_.value(baseline_), variants_.value(column.variant));
      return {};
    }
  }
  return {};
}

QVariant OpComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || static_cast<size_t>(section) >= columns_.size()) return {};
  const ColumnSpec& c = columns_[static_cast<size_t>(section)];
  const QString v = variants_.value(c.variant);
  if (role == Qt::DisplayRole) {
    switch (c.kind) {
      case ColumnKind::kOp:
        return tr("Op");
      case ColumnKind::kModule:
        return tr("Module");
      case ColumnKind::kPhase:
        return tr("Phase");
      case ColumnKind::kShapes:
        return tr("Input shapes");
      case ColumnKind::kTime:
        return tr("%1 time/step").arg(v);
      case ColumnKind::kCategory:
        return tr("%1 category").arg(v);
      case ColumnKind::kCastTax:
        return tr("%1 cast tax").arg(v);
      case ColumnKind::kSpeedup:
        return tr("%1 speedup").arg(v);
    }
  }
  if (role == Qt::ToolTipRole && c.kind == ColumnKind::kCastTax) return QString::fromLatin1(glossary::kCastTax);
  return {};
}

}  // namespace ampscope::ui
