#pragma once
// The comparison's per-variant table: one row per precision variant (fp32, tf32,
// fp16, bf16) with its median step time and spread, throughput, speedup over
// fp32 with the spread of the paired repeats, memory, final loss and FLOP/s.
// Rows are the comparison's variants in the order they were asked for; a variant
// with no finished repeat yet still has its row ("—"), so the table does not jump
// while a comparison fills it.
#include <QAbstractTableModel>
#include <vector>

#include "profiler/analysis/comparison.h"

namespace ampscope::ui {

class VariantSummaryModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    kVariant,
    kRepeats,
    kMedianStep,
    kStepRange,
    kSamplesPerSecond,
    kSpeedup,
    kPeakMemory,
    kFinalLoss,
    kSkippedSteps,
    kFlops,
    kUtilization,
    kStatus,
    kColumnCount
  };

  explicit VariantSummaryModel(QObject* parent = nullptr);

  // `summaries` is summarize(comparison): one per variant, same order.
  void setComparison(const profiler::Comparison& comparison,
                     std::vector<profiler::VariantSummary> summaries);
  void clear();
  const profiler::VariantSummary& summary(int row) const { return rows_[static_cast<size_t>(row)].summary; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    profiler::VariantSummary summary;
    std::string precision;  // the engine's: fp32 | fp16 | bf16
    bool tf32 = false, scaler = false, baseline = false;
    std::string error;
    int64_t planned_repeats = 0;
  };
  QVariant display(const Row& row, int column) const;
  QVariant sortValue(const Row& row, int column) const;
  std::vector<Row> rows_;
  bool has_baseline_ = false;
  bool inference_ = false;  // an inference comparison: batches, not steps
  bool resident_set_ = false;  // a CPU comparison: its memory is the process's resident set
};

}  // namespace ampscope::ui
