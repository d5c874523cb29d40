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
  // Per category: profiler::category_totals, the one aggregation the CLI and report use too.
  int64_t compiled_ns = 0;
  for (const profiler::CategoryTotals& c : profiler::category_totals(rows, compiled)) {
    for (int i = 0; i < kCategoryCount; ++i)
      if (categoryAt(i) == c.category) totals.time_ns[i] += totals.gpu ? c.gpu_time_ns : c.cpu_time_ns;
    compiled_ns += totals.gpu ? c.compiled_gpu_time_ns : c.compiled_cpu_time_ns;
  }
  auto add_by_dtype = [&](const std::string& out, int64_t t) {
    if (out == "float32")
      totals.fp32_ns += t;
    else if (out == "float16")
      totals.fp16_ns += t;
    else if (out == "bfloat16")
      totals.bf16_ns += t;
    else
      totals.other_ns += t;
  };
  // By output dtype, over the same rows; compiling is in no category, nor here (a compile
  // inside a region's row is taken from that row's "other").
  for (const auto& s : rows) {
    if (s.name == profiler::kTorchCompileOp) {
      if (totals.top_level_only && !s.top_level) {
        const int64_t t = totals.gpu ? s.gpu_time_ns : s.cpu_time_ns;
        totals.total_ns -= t;
        totals.other_ns -= t;
      }
      continue;
    }
    if (totals.top_level_only && !s.top_level) continue;
    const int64_t t = totals.gpu ? s.gpu_time_ns : s.cpu_time_ns;
    totals.total_ns += t;
    add_by_dtype(s.output_dtypes.empty() ? std::string() : s.output_dtypes.front(), t);
  }
  totals.total_ns = std::max<int64_t>(totals.total_ns, 0);
  totals.other_ns = std::max<int64_t>(totals.other_ns, 0);
  // The compiled kernels' time leaves the regions (rows without an output dtype) for the
  // dtype its kernels computed in, in the proportion category_totals moved of it.
  int64_t wanted = 0;
  for (const auto& k : compiled) wanted += std::max<int64_t>(totals.gpu ? k.gpu_time_ns : k.cpu_time_ns, 0);
  if (compiled_ns > 0 && wanted > 0) {
    const double scale = static_cast<double>(compiled_ns) / static_cast<double>(wanted);
    int64_t moved = 0;
    for (const auto& k : compiled) {
      const auto t = static_cast<int64_t>(
          static_cast<double>(std::max<int64_t>(totals.gpu ? k.gpu_time_ns : k.cpu_time_ns, 0)) * scale);
      add_by_dtype(k.output_dtype, t);
      moved += t;
    }
    totals.other_ns -= std::min(moved, totals.other_ns);
  }
  return totals;
}

}  // namespace ampscope::ui
