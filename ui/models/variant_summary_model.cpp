#include "ui/models/variant_summary_model.h"

#include <QBrush>
#include <QFont>
#include <cmath>

#include "profiler/memory_kind.h"
#include "ui/models/formatting.h"
#include "ui/models/model_roles.h"

namespace ampscope::ui {
namespace {

QString msText(double ms) {
  if (!(ms > 0.0)) return QStringLiteral("—");
  return formatDuration(static_cast<int64_t>(std::llround(ms * 1e6)));
}

QString speedupText(double x) { return QStringLiteral("%1×").arg(x, 0, 'f', 2); }

QString flopsText(double flops_per_second) {
  static const char* const units[] = {"FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s"};
  double v = flops_per_second;
  int unit = 0;
  while (v >= 1000.0 && unit < 5) {
    v /= 1000.0;
    ++unit;
  }
  return QStringLiteral("%1 %2").arg(v, 0, 'f', v < 10 ? 2 : 1).arg(QLatin1String(units[unit]));
}

bool timed(const profiler::VariantSummary& s) { return s.measured_steps > 0 && s.step_ms.median > 0.0; }

}  // namespace

VariantSummaryModel::VariantSummaryModel(QObject* parent) : QAbstractTableModel(parent) {}

void VariantSummaryModel::setComparison(const profiler::Comparison& comparison,
                                        std::vector<profiler::VariantSummary> summaries) {
  std::vector<Row> rows;
  const auto base = profiler::baseline_index(comparison);
  for (size_t i = 0; i < comparison.variants.size(); ++i) {
    const auto& run = comparison.variants[i];
    Row r;
    if (i < summaries.size()) r.summary = std::move(summaries[i]);
    r.summary.variant = run.variant;
    r.precision = run.precision;
    r.tf32 = run.tf32;
    r.scaler = run.scaler;
    r.baseline = base && *base == i;
    r.error = run.error;
    r.planned_repeats = comparison.planned_repeats;
    rows.push_back(std::move(r));
  }
  // Same variants in the same order (a comparison filling in): a dataChanged keeps the selection.
  const bool same_rows = rows.size() == rows_.size() &&
                         std::equal(rows.begin(), rows.end(), rows_.begin(), [](const Row& a, const Row& b) {
                           return a.summary.variant == b.summary.variant;
                         });
  const bool resident_set = profiler::memory_kind(comparison.meta.device) == profiler::MemoryKind::kResidentSet;
  if (comparison.inference != inference_ || resident_set != resident_set_) {
    inference_ = comparison.inference;
    resident_set_ = resident_set;
    emit headerDataChanged(Qt::Horizontal, 0, kColumnCount - 1);
  }
  if (same_rows) {
    rows_ = std::move(rows);
    has_baseline_ = base.has_value();
    if (!rows_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, kColumnCount - 1));
    return;
  }
  beginResetModel();
  rows_ = std::move(rows);
  has_baseline_ = base.has_value();
  endResetModel();
}

void VariantSummaryModel::clear() {
  beginResetModel();
  rows_.clear();
  has_baseline_ = false;
  endResetModel();
}

int VariantSummaryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int VariantSummaryModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant VariantSummaryModel::display(const Row& row, int column) const {
  const auto& s = row.summary;
  const QString none = QStringLiteral("—");
  switch (column) {
    case kVariant:
      return QString::fromStdString(s.variant);
    case kRepeats:
      return QStringLiteral("%1 / %2").arg(s.finished_repeats).arg(row.planned_repeats);
    case kMedianStep:
      return timed(s) ? msText(s.step_ms.median) : none;
    case kStepRange:
      return timed(s) ? QStringLiteral("%1 – %2").arg(msText(s.step_ms.min), msText(s.step_ms.max)) : none;
    case kSamplesPerSecond:
      return s.samples_per_second > 0 ? formatCount(s.samples_per_second) : none;
    case kSpeedup:
      if (row.baseline) return timed(s) ? tr("1.00× (baseline)") : none;
      if (!(s.speedup.median > 0)) return none;
      if (s.speedup.min == s.speedup.max) return speedupText(s.speedup.median);
      return QStringLiteral("%1 (%2 – %3)")
          .arg(speedupText(s.speedup.median), speedupText(s.speedup.min), speedupText(s.speedup.max));
    case kPeakMemory:
      return s.peak_memory_bytes > 0 ? formatBytes(s.peak_memory_bytes) : none;
    case kFinalLoss:
      if (s.finished_repeats == 0) return none;
      return std::isfinite(s.final_loss) ? QString::number(s.final_loss, 'f', 4) : tr("diverged");
    case kSkippedSteps:
      return s.finished_repeats == 0 ? none : QString::number(s.skipped_steps);
    case kFlops:
      return s.achieved_flops_per_second > 0 ? flopsText(s.achieved_flops_per_second) : none;
    case kUtilization:
      return s.utilization > 0 ? QStringLiteral("%1 %").arg(100.0 * s.utilization, 0, 'f', 1) : none;
    case kStatus:
      if (!row.error.empty()) return tr("failed: %1").arg(QString::fromStdString(row.error));
      if (s.finished_repeats >= row.planned_repeats) return tr("done");
      return s.finished_repeats == 0 ? tr("waiting") : tr("%1 of %2 repeats").arg(s.finished_repeats).arg(row.planned_repeats);
  }
  return {};
}

// Raw numbers; -1 for "—" so missing values sort below every measured one.
QVariant VariantSummaryModel::sortValue(const Row& row, int column) const {
  const auto& s = row.summary;
  switch (column) {
    case kVariant:
      return QString::fromStdString(s.variant);
    case kRepeats:
      return qint64(s.finished_repeats);
    case kMedianStep:
      return timed(s) ? s.step_ms.median : -1.0;
    case kStepRange:
      return timed(s) ? s.step_ms.max - s.step_ms.min : -1.0;
    case kSamplesPerSecond:
      return s.samples_per_second > 0 ? s.samples_per_second : -1.0;
    case kSpeedup:
      return row.baseline && timed(s) ? 1.0 : (s.speedup.median > 0 ? s.speedup.median : -1.0);
    case kPeakMemory:
      return qint64(s.peak_memory_bytes > 0 ? s.peak_memory_bytes : -1);
    case kFinalLoss:
      return s.finished_repeats > 0 && std::isfinite(s.final_loss) ? s.final_loss : -1.0;
    case kSkippedSteps:
      return qint64(s.finished_repeats > 0 ? s.skipped_steps : -1);
    case kFlops:
      return s.achieved_flops_per_second > 0 ? s.achieved_flops_per_second : -1.0;
    case kUtilization:
      return s.utilization > 0 ? s.utilization : -1.0;
    case kStatus:
      return display(row, column);
  }
  return {};
}

QVariant VariantSummaryModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& row = rows_[static_cast<size_t>(index.row())];
  const int col = index.column();
  switch (role) {
    case Qt::DisplayRole:
      return display(row, col);
    case SortRole:
      return sortValue(row, col);
    case FilterTextRole:
      return QStringLiteral("%1 %2 %3")
          .arg(QString::fromStdString(row.summary.variant), QString::fromStdString(row.precision),
               QString::fromStdString(row.error));
    case Qt::DecorationRole:
      // The variant's color is its color in the loss plot: the table is the legend.
      return col == kVariant ? QVariant(variantColor(row.summary.variant)) : QVariant();
    case Qt::TextAlignmentRole:
      return col == kVariant || col == kStatus ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                               : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole:
      if (col == kStatus && !row.error.empty()) return QBrush(categoryColor(profiler::OpCategory::kAutocastCast));
      if (col == kFinalLoss && row.summary.finished_repeats > 0 && !std::isfinite(row.summary.final_loss))
        return QBrush(categoryColor(profiler::OpCategory::kAutocastCast));
      if (col == kSpeedup && !row.baseline && row.summary.speedup.median > 0)
        return QBrush(speedupColor(row.summary.speedup.median));
      return {};
    case Qt::FontRole:
      if (col == kVariant || (col == kSpeedup && !row.baseline)) {
        QFont f;
        f.setBold(true);
        return f;
      }
      return {};
    case Qt::ToolTipRole:
      switch (col) {
        case kVariant:
          return variantDescription(QString::fromStdString(row.summary.variant));
        case kSpeedup:
          return has_baseline_ ? tr("fp32's median step time over this variant's, paired repeat by repeat "
                                    "(repeats are interleaved); the range is over the repeats.")
                               : tr("No fp32 run in this comparison, so no speedup.");
        case kPeakMemory:
          return resident_set_ ? tr("The largest peak over the repeats of the process's resident set "
                                    "(tensors, interpreter and libraries).")
                               : tr("The largest peak over the repeats of the bytes CUDA's caching "
                                    "allocator held for tensors.");
        case kUtilization:
          return tr("Achieved FLOP/s (from the GEMM, convolution and attention shapes) over the "
                    "device's datasheet peak for this precision; none for CPUs.");
        case kStatus:
          return QString::fromStdString(row.error);
        default:
          return {};
      }
  }
  return {};
}

QVariant VariantSummaryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::DisplayRole) {
    static const char* const names[kColumnCount] = {
        "Variant", "Repeats", "Median step", "Step min – max", "Samples/s", "Speedup vs fp32",
        "Peak memory", "Final loss", "Skipped steps", "FLOP/s", "Utilization", "Status"};
    static const char* const inference_names[kColumnCount] = {
        "Variant", "Repeats", "Median batch", "Batch min – max", "Samples/s", "Speedup vs fp32",
        "Peak memory", "Last loss", "Skipped steps", "FLOP/s", "Utilization", "Status"};
    if (section == kPeakMemory && resident_set_) return tr("Peak resident set");
    return section >= 0 && section < kColumnCount ? tr((inference_ ? inference_names : names)[section]) : QVariant();
  }
  if (role == Qt::ToolTipRole && section == kMedianStep)
    return inference_ ? tr("Median latency of one inference batch over every measured batch of every repeat; "
                           "warm-up batches excluded.")
                      : tr("Median over every measured step of every repeat; warm-up steps excluded.");
  return {};
}

}  // namespace ampscope::ui
