#pragma once
// The op table: one row per profiler::OpStats (an op with one signature and one
// autocast category). Rows are replaced as a whole from each profile snapshot;
// when the row keys did not change the update is a dataChanged, so selection and
// scroll position survive the 30 Hz refresh.
#include <QAbstractTableModel>
#include <utility>
#include <vector>

#include "profiler/records.h"

namespace ampscope::ui {

class OpStatsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    kOp,
    kModule,
    kPhase,
    kCategory,
    kDtypes,
    kShapes,
    kCalls,
    kCpuTime,
    kGpuTime,
    kTensorCoreShare,
    kCastTax,
    kColumnCount
  };

  explicit OpStatsModel(QObject* parent = nullptr);

  void setRows(std::vector<profiler::OpStats> rows);
  void clear();
  const profiler::OpStats& row(int r) const { return rows_[static_cast<size_t>(r)]; }
  const std::vector<profiler::OpStats>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::vector<profiler::OpStats> rows_;
};

// The summary strip's view: profiler::time_by_category_and_dtype in the strip's order, one time per
// category (GPU when traced, else CPU), and the same time split by output dtype.
struct CategoryTotals {
  int64_t time_ns[profiler::kOpCategoryCount] = {};  // indexed like categoryAt(); GPU time when any, else CPU time
  int64_t total_ns = 0;
  bool gpu = false;                                             // the figures are GPU time
  int64_t fp32_ns = 0, fp16_ns = 0, bf16_ns = 0, other_ns = 0;  // by output dtype
  bool top_level_only = false;  // summed over top-level rows, so every ns counts once
  // Time per phase (profiler::phase_totals: the same rows, compiling in none), GPU time when
  // `gpu`; in Phase order, phases without calls left out.
  std::vector<std::pair<profiler::Phase, int64_t>> phase_ns;
};
// Rows are inclusive, so summing all of them counts nested ops twice; when the
// profiler marks top-level rows (OpStats::top_level) only those are summed.
// `compiled` (a saved session's ProfileSnapshot::compiled_compute) splits the compiled
// regions' time by what their kernels computed, as category_totals does.
CategoryTotals summarizeByCategory(const std::vector<profiler::OpStats>& rows,
                                   const std::vector<profiler::CompiledComputeTime>& compiled = {});

}  // namespace ampscope::ui
