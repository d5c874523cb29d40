#pragma once
// The eager and the compiled run of one model side by side (issue 28,
// profiler::EagerVsCompiled): one row per module, phase and kind of arithmetic
// (GEMM, convolution, attention), with the dtypes and autocast's decision in each
// run and whether they agree. The diff window's table; `ampscope diff` prints the same.
#include <QAbstractTableModel>

#include "profiler/analysis/eager_vs_compiled.h"

namespace ampscope::ui {

class EagerVsCompiledModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kModule, kPhase, kKind, kEager, kCompiled, kAgreement, kColumnCount };

  explicit EagerVsCompiledModel(QObject* parent = nullptr);
  void setRows(std::vector<profiler::ModulePrecision> rows);
  const profiler::ModulePrecision& row(int r) const { return rows_[static_cast<size_t>(r)]; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  // "bfloat16 -> bfloat16 (demoted)", "—" where the run has none: the text both the
  // table and `ampscope diff` show for one run's side.
  static QString sideText(const profiler::PrecisionSide& side);

 private:
  std::vector<profiler::ModulePrecision> rows_;
};

}  // namespace ampscope::ui
