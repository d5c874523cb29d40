#pragma once
// File → Export data: where and in which format to export the shown session (a Chrome/Perfetto
// trace, CSV tables, a JSON summary, TensorBoard events) or comparison (JSON or CSV), chosen in
// one save dialog whose file type is the format. The export itself is profiler's, the one
// `ampscope export` runs (profiler/report/file_export.h).
#include <QString>
#include <optional>

#include "profiler/report/file_export.h"

class QWidget;

namespace ampscope::ui {

struct ExportChoice {
  profiler::ExportFormat format = profiler::ExportFormat::kJson;
  QString target;  // the file, the CSV tables' prefix, or the TensorBoard log directory
};

// The dialog's file types, in its order: a comparison's JSON and CSV only.
QStringList exportFilters(bool comparison);
// The choice a path picked under `filter` makes: the format, and the target the export takes
// (CSV: the prefix, "run" for run.csv or run.ops.csv; TensorBoard: the directory, as named).
// nullopt for a filter not among exportFilters'.
std::optional<ExportChoice> exportChoice(const QString& filter, const QString& path);
// Asks; nullopt when the user cancels. `source`: the file to export, for the suggested name.
std::optional<ExportChoice> askExport(QWidget* parent, const QString& source, bool comparison);

}  // namespace ampscope::ui
