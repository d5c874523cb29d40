#include "ui/models/rank_model.h"

#include <QBrush>
#include <QFileInfo>
#include <QFont>
#include <cmath>

#include "ui/models/formatting.h"
#include "ui/models/model_roles.h"

namespace ampscope::ui {

RankModel::RankModel(QObject* parent) : QAbstractTableModel(parent) {}

void RankModel::setRanks(profiler::RankComparison ranks) {
  beginResetModel();
  ranks_ = std::move(ranks);
  endResetModel();
}

int RankModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(ranks_.ranks.size());
}

int RankModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

bool RankModel::isStraggler(int row) const { return ranks_.is_straggler(static_cast<size_t>(row)); }

QVariant RankModel::display(const profiler::RankRow& r, int column) const {
  switch (column) {
    case kRank:
      return QString::number(r.rank);
    case kSteps:
      return QString::number(r.steps);
    case kMedianStep:
      return formatDuration(static_cast<int64_t>(std::llround(r.median_step_ms * 1e6)));
    case kVsFastest:
      return QStringLiteral("%1×").arg(r.vs_fastest, 0, 'f', 2);
    case kSkipped:
      return QString::number(r.skipped);
    case kLastLossScale:
      return QString::number(r.last_loss_scale, 'g', 6);
    case kCollectives:
      return formatDuration(r.collective_cpu_ns);
    case kCollectiveShare:
      return QStringLiteral("%1 %").arg(100.0 * r.collective_share, 0, 'f', 1);
    case kFile:
      return QFileInfo(QString::fromStdString(r.path)).fileName();
  }
  return {};
}

QVariant RankModel::sortValue(const profiler::RankRow& r, int column) const {
  switch (column) {
    case kRank:
      return qint64(r.rank);
    case kSteps:
      return qint64(r.steps);
    case kMedianStep:
      return r.median_step_ms;
    case kVsFastest:
      return r.vs_fastest;
    case kSkipped:
      return qint64(r.skipped);
    case kLastLossScale:
      return r.last_loss_scale;
    case kCollectives:
      return qint64(r.collective_cpu_ns);
    case kCollectiveShare:
      return r.collective_share;
    case kFile:
      return QString::fromStdString(r.path);
  }
  return {};
}

QVariant RankModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const profiler::RankRow& r = ranks_.ranks[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      return display(r, index.column());
    case SortRole:
      return sortValue(r, index.column());
    case FilterTextRole:
    case SessionPathRole:
      return QString::fromStdString(r.path);
    case Qt::ToolTipRole:
      if (index.column() == kFile)
        return tr("%1\nDouble-click a rank to open its session").arg(QString::fromStdString(r.path));
      if (isStraggler(index.row()) && index.column() == kVsFastest)
        return tr("the straggler: every rank waits for it at each all-reduce");
      return {};
    case Qt::TextAlignmentRole:
      return index.column() == kFile ? QVariant(int(Qt::AlignLeft | Qt::AlignVCenter))
                                     : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::ForegroundRole:
      if (isStraggler(index.row()) && index.column() == kVsFastest) return QBrush(QColor(0xc6, 0x28, 0x28));
      return {};
    case Qt::FontRole:
      if (isStraggler(index.row()) && index.column() == kVsFastest) {
        QFont bold;
        bold.setBold(true);
        return bold;
      }
      return {};
  }
  return {};
}

QVariant RankModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::DisplayRole) {
    switch (section) {
      case kRank: return tr("Rank");
      case kSteps: return tr("Steps");
      case kMedianStep: return tr("Median step");
      case kVsFastest: return tr("vs fastest");
      case kSkipped: return tr("Skipped");
      case kLastLossScale: return tr("Last loss scale");
      case kCollectives: return tr("Collectives");
      case kCollectiveShare: return tr("Share");
      case kFile: return tr("File");
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case kVsFastest: return tr("median step time over the fastest rank's");
      case kSkipped: return tr("steps GradScaler skipped (inf/NaN gradients)");
      case kCollectives: return tr("CPU time in top-level torch.distributed (c10d::) ops");
      case kCollectiveShare: return tr("of all top-level op CPU time");
    }
  }
  return {};
}

}  // namespace ampscope::ui
