#include "ui/models/compiled_kernel_model.h"

#include "profiler/analysis/compiled_kernels_text.h"
#include "ui/models/formatting.h"
#include "ui/models/model_roles.h"

namespace ampscope::ui {

CompiledKernelModel::CompiledKernelModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompiledKernelModel::setRows(const std::vector<profiler::CompiledKernelRow>& rows) {
  beginResetModel();
  rows_.clear();
  graph_ns_.clear();
  share_of_gpu_.clear();
  ops_text_.clear();
  int64_t graph_ns = 0;
  bool gpu = false;
  for (const profiler::CompiledKernelRow& r : rows) {
    if (r.kind == profiler::kCompiledGraphCall) {
      gpu = r.gpu_time_ns > 0;
      graph_ns = gpu ? r.gpu_time_ns : r.cpu_time_ns;
      continue;
    }
    rows_.push_back(r);
    graph_ns_.push_back(graph_ns);
    share_of_gpu_.push_back(gpu);
    ops_text_.push_back(
        r.kind == profiler::kCompiledOtherCall ? QString() : QString::fromStdString(profiler::fused_ops_text(r)));
  }
  endResetModel();
}

int CompiledKernelModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CompiledKernelModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant CompiledKernelModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto i = static_cast<size_t>(index.row());
  const profiler::CompiledKernelRow& r = rows_[i];
  const int64_t own_ns = share_of_gpu_[i] ? r.gpu_time_ns : r.cpu_time_ns;
  const double share = graph_ns_[i] > 0 ? static_cast<double>(own_ns) / static_cast<double>(graph_ns_[i]) : -1.0;
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case kGraph: return QString::number(r.graph);
        case kPhase: return phaseLabel(r.phase);
        case kKind: return QString::fromStdString(r.kind);
        case kKernel: return QString::fromStdString(profiler::compiled_call_text(r));
        case kCalls: return QString::number(r.calls);
        case kCpuTime: return formatDuration(r.cpu_time_ns);
        case kGpuTime: return r.kernels > 0 ? formatDuration(r.gpu_time_ns) : QStringLiteral("—");
        case kGraphShare: return share < 0 ? QStringLiteral("—") : QStringLiteral("%1 %").arg(share * 100, 0, 'f', 1);
        case kGraphOps: return ops_text_[i];
      }
      break;
    case SortRole:
      switch (index.column()) {
        case kGraph: return QVariant::fromValue<qint64>(r.graph);
        case kCalls: return QVariant::fromValue<qint64>(r.calls);
        case kCpuTime: return QVariant::fromValue<qint64>(r.cpu_time_ns);
        case kGpuTime: return QVariant::fromValue<qint64>(r.gpu_time_ns);
        case kGraphShare: return share;
        default: return data(index, Qt::DisplayRole);
      }
    case FilterTextRole:
      return QString::fromStdString(r.kernel) + QLatin1Char(' ') + ops_text_[i];
    case Qt::ToolTipRole:
      if (index.column() == kGraphOps || index.column() == kKernel) return ops_text_[i];
      if (index.column() == kGpuTime && r.kernels > 0)
        return QStringLiteral("%1 GPU kernels, %2 on Tensor Cores").arg(r.kernels).arg(r.tensor_core_kernels);
      break;
    case Qt::TextAlignmentRole:
      if (index.column() == kCalls || index.column() == kCpuTime || index.column() == kGpuTime ||
          index.column() == kGraphShare)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
      return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
    default:
      break;
  }
  return {};
}

QVariant CompiledKernelModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= kColumnCount) return {};
  if (role == Qt::DisplayRole) {
    static const char* const names[kColumnCount] = {"Graph",    "Phase",    "Kind",     "Kernel",
                                                    "Calls",    "CPU time", "GPU time", "Of graph",
                                                    "Graph ops it computes"};
    return QString::fromUtf8(names[section]);
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case kKind:
        return QStringLiteral("fused: a kernel inductor generated; extern: an ATen op it calls (GEMM, conv); "
                              "other: an op recorded under the graph's call that inductor did not list");
      case kGpuTime: return QStringLiteral("GPU time of the kernels it ran on profiled steps (CUPTI); — on the CPU");
      case kGraphShare:
        return QStringLiteral("The kernel's share of its graph's time on profiled steps: GPU time where the graph "
                              "ran on a GPU, else CPU time");
      case kGraphOps: return QStringLiteral("The graph's ops the kernel computes, by module and autocast category");
      default: break;
    }
  }
  return {};
}

}  // namespace ampscope::ui
