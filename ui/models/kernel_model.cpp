#include "ui/models/kernel_model.h"

#include <QBrush>
#include <QStringList>

#include "ui/models/formatting.h"
#include "ui/models/model_roles.h"

namespace ampscope::ui {
namespace {

using profiler::KernelSummary;

int64_t meanNs(const KernelSummary& k) {
  if (k.mean_ns > 0) return k.mean_ns;
  return k.calls > 0 ? k.total_ns / k.calls : 0;
}

QStringList toStringList(const std::vector<std::string>& names) {
  QStringList list;
  for (const auto& name : names) list << QString::fromStdString(name);
  return list;
}

QStringList launchingOps(const KernelSummary& k) { return toStringList(k.launching_ops); }

}  // namespace

KernelModel::KernelModel(QObject* parent) : QAbstractTableModel(parent) {}

void KernelModel::setRows(std::vector<KernelSummary> rows) {
  int64_t total = 0;
  for (const auto& k : rows) total += k.total_ns;
  const bool same_rows = rows.size() == rows_.size() &&
                         std::equal(rows.begin(), rows.end(), rows_.begin(),
                                    [](const KernelSummary& a, const KernelSummary& b) {
                                      return a.name == b.name && a.launching_ops == b.launching_ops;
                                    });
  if (same_rows) {
    rows_ = std::move(rows);
    total_ns_ = total;
    if (!rows_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, kColumnCount - 1));
    return;
  }
  beginResetModel();
  rows_ = std::move(rows);
  total_ns_ = total;
  endResetModel();
}

void KernelModel::clear() { setRows({}); }

int KernelModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int KernelModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant KernelModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const KernelSummary& k = rows_[static_cast<size_t>(index.row())];
  const int col = index.column();
  const double share =
      total_ns_ > 0 ? static_cast<double>(k.total_ns) / static_cast<double>(total_ns_) : 0.0;
  switch (role) {
    case Qt::DisplayRole:
      switch (col) {
        case kName:
          return QString::fromStdString(k.name);
        case kCalls:
          return QString::number(k.calls);
        case kTotal:
          return formatDuration(k.total_ns);
        case kMean:
          return formatDuration(meanNs(k));
        case kMax:
          return formatDuration(k.max_ns);
        case kShare:
          return QStringLiteral("%1 %").arg(share * 100, 0, 'f', 1);
        case kGrid:
          return gridText(k.grid);
        case kBlock:
          return gridText(k.block);
        case kTensorCore:
          return k.tensor_core ? QStringLiteral("yes") : QStringLiteral("no");
        case kLaunchedBy:
          return launchingOps(k).join(QStringLiteral(", "));
      }
      break;
    case SortRole:
      switch (col) {
        case kCalls:
          return QVariant::fromValue<qint64>(k.calls);
        case kTotal:
          return QVariant::fromValue<qint64>(k.total_ns);
        case kMean:
          return QVariant::fromValue<qint64>(meanNs(k));
        case kMax:
          return QVariant::fromValue<qint64>(k.max_ns);
        case kShare:
          return share;
        case kGrid:
          return QVariant::fromValue<qint64>(int64_t{k.grid[0]} * k.grid[1] * k.grid[2]);
        case kBlock:
          return QVariant::fromValue<qint64>(int64_t{k.block[0]} * k.block[1] * k.block[2]);
        case kTensorCore:
          return k.tensor_core ? 1 : 0;
        default:
          return data(index, Qt::DisplayRole);
      }
    case FilterTextRole:
      return QString::fromStdString(k.name) + QLatin1Char(' ') +
             launchingOps(k).join(QLatin1Char(' '));
    case LaunchedByRole:
      return launchingOps(k);
    case RanInsideRole:
      return toStringList(k.enclosing_ops);
    case Qt::TextAlignmentRole:
      if (col == kName || col == kLaunchedBy)
        return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
      return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
      if (col == kName) return QString::fromStdString(k.name);
      if (col == kTensorCore)
        return QStringLiteral(
                   "Whether the kernel runs on Tensor Cores (matrix units that need "
                   "fp16/bf16/tf32 inputs), judged by the kernel's name with rules checked "
                   "against an H100's tensor-pipe counters.");
      if (col == kLaunchedBy) {
        QString tip = launchingOps(k).join(QLatin1Char('\n'));
        if (!k.enclosing_ops.empty())
          tip += QStringLiteral("\ninside: ") + toStringList(k.enclosing_ops).join(QStringLiteral(", "));
        return tip;
      }
      break;
    default:
      break;
  }
  return {};
}

QVariant KernelModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= kColumnCount) return {};
  if (role == Qt::DisplayRole) {
    static const char* const names[kColumnCount] = {"Kernel",      "Calls",      "Total", "Mean",
                                                    "Max",         "Share",      "Grid",  "Block",
                                                    "Tensor Core", "Launched by"};
    return QString::fromUtf8(names[section]);
  }
  if (role == Qt::ToolTipRole && section == kShare)
    return QStringLiteral("This kernel's part of all traced GPU kernel time.");
  return {};
}

}  // namespace ampscope::ui
