#include "ui/models/eager_vs_compiled_model.h"

#include <QColor>

#include "ui/models/formatting.h"
#include "ui/models/model_roles.h"

namespace ampscope::ui {
EagerVsCompiledModel::EagerVsCompiledModel(QObject* parent) : QAbstractTableModel(parent) {}

void EagerVsCompiledModel::setRows(std::vector<profiler::ModulePrecision> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

QString EagerVsCompiledModel::sideText(const profiler::PrecisionSide& side) {
  return QString::fromStdString(profiler::precision_side_text(side, "→", "—"));
}

int EagerVsCompiledModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int EagerVsCompiledModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant EagerVsCompiledModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const profiler::ModulePrecision& m = rows_[static_cast<size_t>(index.row())];
  const QString module = m.module.empty() ? tr("(no module)") : QString::fromStdString(m.module);
  switch (role) {
    case Qt::DisplayRole:
    case SortRole:
      switch (index.column()) {
        case kModule: return module;
        case kPhase: return phaseLabel(m.phase);
        case kKind: return QString::fromStdString(m.kind);
        case kEager: return sideText(m.eager);
        case kCompiled: return sideText(m.compiled);
        case kAgreement: return QString::fromUtf8(profiler::to_string(m.agreement));
      }
      break;
    case FilterTextRole: return module + QLatin1Char(' ') + QString::fromStdString(m.kind);
    case AgreementRole: return static_cast<int>(m.agreement);
    case Qt::ForegroundRole:
      // A difference is what the user came for; one-sided rows are notes.
      if (index.column() == kAgreement && m.agreement == profiler::Agreement::kDiffers) return QColor(Qt::red);
      break;
    case Qt::ToolTipRole:
      if (index.column() == kEager || index.column() == kCompiled) {
        const profiler::PrecisionSide& s = index.column() == kEager ? m.eager : m.compiled;
        if (s.present) return tr("%1 calls; operand dtypes → output dtypes (autocast's decision)").arg(s.calls);
      }
      if (index.column() == kAgreement && m.agreement == profiler::Agreement::kCompiledOnly && m.module.empty())
        return tr("ops of a compiled graph without a module path (AOTAutograd gave their nodes none)");
      break;
  }
  return {};
}

QVariant EagerVsCompiledModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kModule: return tr("Module");
    case kPhase: return tr("Phase");
    case kKind: return tr("Kind");
    case kEager: return tr("Eager run");
    case kCompiled: return tr("Compiled run");
    case kAgreement: return tr("Agreement");
  }
  return {};
}

}  // namespace ampscope::ui
