#pragma once
// The per-op comparison: top-level ops matched across precision variants by
// name, phase, module and input shapes (profiler::match_ops), with each variant's
// time per step and, for every variant but the baseline, its autocast category,
// the cast tax inside that time and the speedup over the baseline. Answers
// "where did AMP gain and where did it lose?".
//
// Columns depend on the variants: Op, Module, Phase, then for each variant
// "<v> time", for each non-baseline variant "<v> category", "<v> cast tax",
// "<v> speedup", and last the input shapes. columnKind()/columnVariant() say
// which is which.
#include <QAbstractTableModel>
#include <QStringList>
#include <vector>

#include "profiler/analysis/comparison.h"

namespace ampscope::ui {

class OpComparisonModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum class ColumnKind { kOp, kModule, kPhase, kShapes, kTime, kCategory, kCastTax, kSpeedup };

  explicit OpComparisonModel(QObject* parent = nullptr);

  // `rows` is match_ops(comparison); the variants give the column groups.
  void setComparison(const profiler::Comparison& comparison, std::vector<profiler::OpComparisonRow> rows);
  void clear();
  const profiler::OpComparisonRow& row(int r) const { return rows_[static_cast<size_t>(r)]; }
  QStringList variants() const { return variants_; }
  ColumnKind columnKind(int column) const { return columns_[static_cast<size_t>(column)].kind; }
  // Index into variants() of a per-variant column; -1 for the shared columns.
  int columnVariant(int column) const { return columns_[static_cast<size_t>(column)].variant; }
  // The column of `kind` for variant `variant` (its name), or -1.
  int findColumn(ColumnKind kind, const QString& variant = {}) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  struct ColumnSpec {
    ColumnKind kind;
    int variant = -1;
  };
  QVariant display(const profiler::OpComparisonRow& row, const ColumnSpec& column) const;
  QVariant sortValue(const profiler::OpComparisonRow& row, const ColumnSpec& column) const;

  std::vector<profiler::OpComparisonRow> rows_;
  QStringList variants_;
  int baseline_ = -1;
  std::vector<ColumnSpec> columns_;
};

}  // namespace ampscope::ui
