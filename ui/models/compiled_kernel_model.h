#pragma once
// Time inside torch.compile'd graphs (issue #28): one row per kernel inductor
// generated (fused), ATen op it calls (extern: GEMMs, convolutions) or other op
// recorded under a graph's call, with the graph ops each computes. From a
// session's compiled_kernels (profiler::CompileEvents::kernels); the graphs' own
// rows give each kernel its share of its graph.
#include <QAbstractTableModel>
#include <vector>

#include "profiler/analysis/compiled_kernels.h"

namespace ampscope::ui {

class CompiledKernelModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kGraph, kPhase, kKind, kKernel, kCalls, kCpuTime, kGpuTime, kGraphShare, kGraphOps, kColumnCount };

  explicit CompiledKernelModel(QObject* parent = nullptr);

  // Rows as the session holds them (a graph row, then its calls); graph rows are kept
  // for the shares and not shown.
  void setRows(const std::vector<profiler::CompiledKernelRow>& rows);
  const profiler::CompiledKernelRow& row(int r) const { return rows_[static_cast<size_t>(r)]; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<profiler::CompiledKernelRow> rows_;  // kernels and other calls only
  // Per row: its graph call's time (0 unknown), GPU time where the graph ran kernels
  // on a GPU (the share is then of that), else CPU time.
  std::vector<int64_t> graph_ns_;
  std::vector<bool> share_of_gpu_;
  std::vector<QString> ops_text_;                  // per row: profiler::fused_ops_text
};

}  // namespace ampscope::ui
