#pragma once
// Roles shared by the ampscope table models: views display Qt::DisplayRole,
// proxies sort by SortRole (raw numbers, so "9 ms" sorts below "10 ms").
#include <Qt>

namespace ampscope::ui {

enum ModelRole : int {
  SortRole = Qt::UserRole + 1,  // raw value: qint64 ns, counts, fractions, or the text
  CategoryRole,                 // int(profiler::OpCategory); OpStatsModel only
  FilterTextRole,               // the text a free-text filter matches (name, module, ...)
  LaunchedByRole,               // KernelModel: QStringList of the ops that launched the kernel
  RanInsideRole,                // KernelModel: QStringList of the ops it ran inside (the launchers' ancestors)
  TopLevelRole,                 // OpStatsModel: bool, called by model/loss/optimizer code or an autograd node
  VerdictRole,                  // ReadinessModel: int(profiler::Readiness) of a cell; none for the layer column
  CompiledRole,                 // OpStatsModel: bool, an op of a torch.compile'd graph (no time of its own)
  AgreementRole,                // EagerVsCompiledModel: int(profiler::Agreement) of the row
  SessionPathRole,              // RankModel: the rank's session file, to open it
  SeverityRole,                 // FindingsModel: int(profiler::Severity) of a recommendation and its evidence
  DetailRole,                   // FindingsModel: a recommendation's detail (what was seen, what to do)
  FindingIdRole,                // FindingsModel: a recommendation's stable id ("loss_scale_stuck_low")
};

}  // namespace ampscope::ui
