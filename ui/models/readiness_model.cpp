#include "ui/models/readiness_model.h"

#include <QColor>

#include "ui/models/model_roles.h"

namespace ampscope::ui {
namespace {

using profiler::LayerReadiness;
using profiler::Readiness;

QString text(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QString lowestReady(const LayerReadiness& l) {
  if (l.overall == Readiness::keep) return QObject::tr("keep in bf16");
  const QString target = text(profiler::quant_target_name(l.best_target));
  return l.overall == Readiness::borderline ? QObject::tr("%1 (borderline)").arg(target) : target;
}

// "keep · 26% flushed (input)": as the summary's and the report's cells read.
QString cellText(const LayerReadiness& l, profiler::QuantFormat f) {
  const profiler::ReadinessReason why = profiler::format_reason(l, f);
  if (!why.metrics) return QStringLiteral("–");
  QString s = text(profiler::readiness_key(why.verdict)) + QStringLiteral(" · ") +
              QString::fromStdString(profiler::describe_metric(why.metric, why.value));
  if (why.verdict != Readiness::ready) s += QStringLiteral(" (%1)").arg(text(profiler::tensor_role_name(why.tensor)));
  return s;
}

QString cellTooltip(const LayerReadiness& l, profiler::QuantFormat f) {
  const profiler::QuantFormatSpec& spec = profiler::quant_format(f);
  QString tip = QStringLiteral("%1, %2: %3")
                    .arg(QString::fromStdString(l.layer), text(spec.name),
                         text(profiler::readiness_name(l.formats[static_cast<int>(f)])));
  for (const profiler::TensorQuantization& t : l.tensors)
    tip += QStringLiteral("\n%1: %2")
               .arg(text(profiler::tensor_role_name(t.role)),
                    QString::fromStdString(profiler::describe_metrics(t.formats[static_cast<int>(f)])));
  return tip;
}

}  // namespace

QColor readinessColor(Readiness verdict) {
  switch (verdict) {
    case Readiness::ready: return QColor(44, 160, 44, 80);
    case Readiness::borderline: return QColor(255, 170, 0, 100);
    case Readiness::keep: return QColor(214, 39, 40, 95);
  }
  return {};
}

ReadinessModel::ReadinessModel(QObject* parent) : QAbstractTableModel(parent) {}

void ReadinessModel::setTotals(const profiler::ReadinessTotals& totals) {
  std::vector<LayerReadiness> layers = totals.layers();
  const bool same_layers = layers.size() == layers_.size() &&
                           std::equal(layers.begin(), layers.end(), layers_.begin(),
                                      [](const LayerReadiness& a, const LayerReadiness& b) { return a.layer == b.layer; });
  if (same_layers) {
    layers_ = std::move(layers);
    if (!layers_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, kColumnCount - 1));
    return;
  }
  beginResetModel();
  layers_ = std::move(layers);
  endResetModel();
}

void ReadinessModel::clear() { setTotals({}); }

int ReadinessModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(layers_.size());
}

int ReadinessModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant ReadinessModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const LayerReadiness& l = layers_[static_cast<size_t>(index.row())];
  const int col = index.column();
  if (col == kLayer) {
    switch (role) {
      case Qt::DisplayRole:
      case FilterTextRole: return QString::fromStdString(l.layer);
      case SortRole: return index.row();  // forward order
      case Qt::ToolTipRole: {
        QStringList tensors;
        for (const auto& t : l.tensors) tensors << text(profiler::tensor_role_name(t.role));
        return tr("%1: %2 measured").arg(QString::fromStdString(l.layer), tensors.join(QStringLiteral(", ")));
      }
      default: return {};
    }
  }
  const Readiness verdict = col == kLowestReady ? l.overall : l.formats[static_cast<int>(formatOf(col))];
  switch (role) {
    case Qt::DisplayRole: return col == kLowestReady ? lowestReady(l) : cellText(l, formatOf(col));
    case Qt::ToolTipRole:
      return col == kLowestReady
                 ? tr("The lowest precision %1 is ready for (or borderline for, if none is ready)")
                       .arg(QString::fromStdString(l.layer))
                 : cellTooltip(l, formatOf(col));
    case Qt::BackgroundRole: return readinessColor(verdict);
    case VerdictRole: return static_cast<int>(verdict);
    // Best first: by verdict, then (lowest ready) by how low the target goes.
    case SortRole:
      return col == kLowestReady ? static_cast<int>(verdict) * 10 - static_cast<int>(l.best_target)
                                 : static_cast<int>(verdict);
    case FilterTextRole: return QString::fromStdString(l.layer);
    default: return {};
  }
}

QVariant ReadinessModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= kColumnCount) return {};
  if (role == Qt::DisplayRole) {
    if (section == kLayer) return tr("layer");
    if (section == kLowestReady) return tr("lowest ready");
    return text(profiler::quant_format(formatOf(section)).name);
  }
  if (role == Qt::ToolTipRole && section >= kFirstFormat) {
    const profiler::QuantFormatSpec& spec = profiler::quant_format(formatOf(section));
    return QString::fromStdString(profiler::describe_thresholds(spec.element));
  }
  return {};
}

}  // namespace ampscope::ui
