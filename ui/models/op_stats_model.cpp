#include "ui/models/op_stats_model.h"

#include <QBrush>
#include <QFont>

#include "ui/models/formatting.h"
#include "ui/models/model_roles.h"

namespace ampscope::ui {
namespace {

using profiler::OpStats;

bool sameKey(const OpStats& a, const OpStats& b) {
  return a.name == b.name && a.module == b.module && a.phase == b.phase &&
         a.category == b.category && a.input_dtypes == b.input_dtypes &&
         a.input_shapes == b.input_shapes && a.output_dtypes == b.output_dtypes;
}

int64_t castTaxNs(const OpStats& s) {
  return s.cast_gpu_time_ns > 0 ? s.cast_gpu_time_ns : s.cast_cpu_time_ns;
}

// -1 when the op launched no GPU work, so such rows sort below 0 %.
double tensorCoreShare(const OpStats& s) {
  if (s.gpu_time_ns <= 0) return -1.0;
  return static_cast<double>(s.tensor_core_gpu_time_ns) / static_cast<double>(s.gpu_time_ns);
}

}  // namespace

OpStatsModel::OpStatsModel(QObject* parent) : QAbstractTableModel(parent) {}

void OpStatsModel::setRows(std::vector<OpStats> rows) {
  const bool same_rows =
      rows.size() == rows_.size() && std::equal(rows.begin(), rows.end(), rows_.begin(), sameKey);
  if (same_rows) {
    rows_ = std::move(rows);
    if (!rows_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, kColumnCount - 1));
    return;
  }
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

void OpStatsModel::clear() { setRows({}); }

int OpStatsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int OpStatsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant OpStatsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const OpStats& s = rows_[static_cast<size_t>(index.row())];
  const int col = index.column();
  switch (role) {
    case Qt::DisplayRole:
      switch (col) {
        case kOp:
          return QString::fromStdString(s.name);
        case kModule:
          return QString::fromStdString(s.module);
        case kPhase:
          // A torch.compile'd graph's op: autocast's decision as traced, its time in the Compiled code pane.
          return s.compiled ? phaseLabel(s.phase) + QStringLiteral(" · compiled") : phaseLabel(s.phase);
        case kCategory:
          return categoryLabel(s.category);
        case kDtypes:
          return dtypeFlow(s.input_dtypes, s.output_dtypes);
        case kShapes:
          return shapesText(s.input_shapes);
        case kCalls:
          return QString::number(s.calls);
        case kCpuTime:
          return s.compiled ? QStringLiteral("fused") : formatDuration(s.cpu_time_ns);
        case kGpuTime:
          return s.gpu_time_ns > 0 ? formatDuration(s.gpu_time_ns) : QStringLiteral("—");
        case kTensorCoreShare: {
          const double share = tensorCoreShare(s);
          return share < 0 ? QStringLiteral("—")
                           : QStringLiteral("%1 %").arg(share * 100, 0, 'f', 0);
        }
        case kCastTax:
          return s.cast_calls > 0 ? formatDuration(castTaxNs(s)) : QString();
      }
      break;
    case SortRole:
      switch (col) {
        case kCalls:
          return QVariant::fromValue<qint64>(s.calls);
        case kCpuTime:
          return QVariant::fromValue<qint64>(s.cpu_time_ns);
        case kGpuTime:
          return QVariant::fromValue<qint64>(s.gpu_time_ns);
        case kTensorCoreShare:
          return tensorCoreShare(s);
        case kCastTax:
          return QVariant::fromValue<qint64>(castTaxNs(s));
        case kCategory:
          return static_cast<int>(s.category);
        case kPhase:
          return static_cast<int>(s.phase);
        default:
          return data(index, Qt::DisplayRole);
      }
    case TopLevelRole:
      return s.top_level;
    case CategoryRole:
      return static_cast<int>(s.category);
    case FilterTextRole:
      return QString::fromStdString(s.name) + QLatin1Char(' ') + QString::fromStdString(s.module) +
             (s.compiled ? QStringLiteral(" compiled") : QString());
    case CompiledRole:
      return s.compiled;
    case Qt::TextAlignmentRole:
      if (col >= kCalls) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
      return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::ForegroundRole:
      if (col == kCategory) return QBrush(categoryColor(s.category));
      break;
    case Qt::FontRole:
      if (col == kCategory) {
        QFont font;
        font.setBold(true);
        return font;
      }
      break;
    case Qt::ToolTipRole:
      switch (col) {
        case kCategory:
          return categoryTooltip(s.category);
        case kTensorCoreShare: {
          QString tip = QString::fromLatin1(glossary::kTensorCoreShare);
          if (s.tensor_core_eligible && !s.tensor_core_note.empty())
            tip += QStringLiteral("\nNot used: ") + QString::fromStdString(s.tensor_core_note);
          return tip;
        }
        case kCastTax:
          return QString::fromLatin1(glossary::kCastTax) +
                 QStringLiteral("\n%1 casts, %2 written, CPU %3, GPU %4")
                     .arg(s.cast_calls)
                     .arg(formatBytes(s.cast_bytes), formatDuration(s.cast_cpu_time_ns),
                          formatDuration(s.cast_gpu_time_ns));
        case kShapes:
          return shapesText(s.input_shapes);
        case kPhase:
          if (const std::string_view meaning = profiler::phase_meaning(s.phase); !meaning.empty() && !s.compiled)
            return QString::fromUtf8(meaning.data(), static_cast<qsizetype>(meaning.size()));
          [[fallthrough]];
        case kCpuTime:
          if (s.compiled)
            return QStringLiteral("An op of a torch.compile'd graph, as autocast traced it (AOTAutograd's graph).\n"
                                  "Compiled code fuses ops into kernels: their time is in the Compiled code pane.");
          break;
        case kGpuTime:
          return QStringLiteral("%1 kernels, %2 on Tensor Cores")
              .arg(s.kernels)
              .arg(s.tensor_core_kernels);
        default:
          break;
      }
      break;
    default:
      break;
  }
  return {};
}

QVariant OpStatsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= kColumnCount) return {};
  if (role == Qt::DisplayRole) {
    static const char* const names[kColumnCount] = {
        "Op",    "Module",   "Phase",    "Category",    "Dtypes (in → out)", "Input shapes",
        "Calls", "CPU time", "GPU time", "Tensor Core", "Cast tax"};
    return QString::fromUtf8(names[section]);
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case kCpuTime:
        return QStringLiteral("Inclusive CPU time: each call's whole span, nested ops included.");
      case kGpuTime:
        return QStringLiteral("GPU time of the kernels launched by the op or anything under it.");
      case kTensorCoreShare:
        return QString::fromLatin1(glossary::kTensorCoreShare);
      case kCastTax:
        return QString::fromLatin1(glossary::kCastTax);
      case kCategory:
        return QStringLiteral(
            "What autocast did to the op: demoted, kept fp32, promoted, unchanged, or a cast.");
      default:
        break;
    }
  }
  return {};
}

CategoryTotals summarizeByCategory(const std::vector<profiler::OpStats>& rows,
                                   const std::vector<profiler::CompiledComputeTime>& compiled) {
  CategoryTotals totals;
  for (const auto& s : rows) {
    totals.gpu = totals.gpu || s.gpu_time_ns > 0;
    totals.top_level_only = totals.top_level_only || s.top_level;
  }
  // profiler's one split by (category, output dtype), which category_totals (the CLI's and
  // the report's) sums by category: the compiled regions' moves are made there, once.
  for (const profiler::CategoryDtypeTime& cell : profiler::time_by_category_and_dtype(rows, compiled)) {
    const int64_t t = totals.gpu ? cell.gpu_time_ns : cell.cpu_time_ns;
    for (int i = 0; i < kCategoryCount; ++i)
      if (categoryAt(i) == cell.category) totals.time_ns[i] += t;
    totals.total_ns += t;
    if (cell.output_dtype == "float32")
      totals.fp32_ns += t;
    else if (cell.output_dtype == "float16")
      totals.fp16_ns += t;
    else if (cell.output_dtype == "bfloat16")
      totals.bf16_ns += t;
    else
      totals.other_ns += t;
  }
  for (const profiler::PhaseTotals& p : profiler::phase_totals(rows))
    totals.phase_ns.emplace_back(p.phase, totals.gpu ? p.gpu_time_ns : p.cpu_time_ns);
  return totals;
}

}  // namespace ampscope::ui
