#include "ui/models/findings_model.h"

#include "ui/models/model_roles.h"

namespace ampscope::ui {

FindingsModel::FindingsModel(QObject* parent) : QAbstractItemModel(parent) {}

void FindingsModel::setRecommendations(std::vector<profiler::Recommendation> recommendations) {
  beginResetModel();
  recommendations_ = std::move(recommendations);
  endResetModel();
}

QModelIndex FindingsModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return {};
  return createIndex(row, column, parent.isValid() ? quintptr(parent.row() + 1) : quintptr(0));
}

QModelIndex FindingsModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == 0) return {};
  return createIndex(static_cast<int>(child.internalId() - 1), 0, quintptr(0));
}

int FindingsModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return static_cast<int>(recommendations_.size());
  if (parent.internalId() != 0 || parent.column() != 0) return 0;  // evidence lines have none
  return static_cast<int>(recommendations_[static_cast<size_t>(parent.row())].evidence.size());
}

int FindingsModel::columnCount(const QModelIndex&) const { return 1; }

QVariant FindingsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const bool evidence = index.internalId() != 0;
  const auto& r = recommendations_[static_cast<size_t>(evidence ? index.internalId() - 1 : index.row())];
  switch (role) {
    case Qt::DisplayRole:
      return QString::fromStdString(evidence ? r.evidence[static_cast<size_t>(index.row())] : r.title);
    case Qt::ToolTipRole:  // rich text, so that Qt wraps the paragraph
      return QStringLiteral("<p>%1</p>").arg(QString::fromStdString(r.detail).toHtmlEscaped());
    case Qt::DecorationRole:
      return evidence ? QVariant() : QVariant(severityColor(r.severity));
    case SeverityRole:
      return static_cast<int>(r.severity);
    case DetailRole:
      return QString::fromStdString(r.detail);
    case FindingIdRole:
      return QString::fromStdString(r.id);
    default:
      return {};
  }
}

QVariant FindingsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section != 0) return {};
  return tr("What to change");
}

QColor severityColor(profiler::Severity severity) {
  return severity == profiler::Severity::kWarning ? QColor(0xd9, 0x82, 0x2b) : QColor(0x4a, 0x7a, 0xb5);
}

}  // namespace ampscope::ui
