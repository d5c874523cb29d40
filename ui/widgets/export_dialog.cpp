#include "ui/widgets/export_dialog.h"

#include <QCoreApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QStringList>
#include <algorithm>
#include <iterator>

namespace ampscope::ui {
namespace {

using profiler::ExportFormat;

struct FormatFilter {
  ExportFormat format;
  const char* filter;
  const char* suffix;  // of the suggested name; a CSV's tables add their own
  bool comparison;     // a comparison exports in it too
};

constexpr FormatFilter kFilters[] = {
    {ExportFormat::kChromeTrace, QT_TRANSLATE_NOOP("ExportDialog", "Chrome/Perfetto trace (*.trace.json)"),
     ".trace.json", false},
    {ExportFormat::kJson, QT_TRANSLATE_NOOP("ExportDialog", "JSON summary with the findings (*.summary.json)"),
     ".summary.json", true},
    {ExportFormat::kCsv, QT_TRANSLATE_NOOP("ExportDialog", "CSV tables, NAME.ops.csv and the others (*.csv)"),
     ".csv", true},
    {ExportFormat::kTensorBoard, QT_TRANSLATE_NOOP("ExportDialog", "TensorBoard log directory (*.tensorboard)"),
     ".tensorboard", false},
};

QString translated(const char* text) { return QCoreApplication::translate("ExportDialog", text); }

}  // namespace

QStringList exportFilters(bool comparison) {
  QStringList filters;
  for (const FormatFilter& f : kFilters)
    if (f.comparison || !comparison) filters << translated(f.filter);
  return filters;
}

std::optional<ExportChoice> exportChoice(const QString& filter, const QString& path) {
  for (const FormatFilter& f : kFilters) {
    if (filter != translated(f.filter)) continue;
    ExportChoice choice{f.format, path};
    if (f.format == ExportFormat::kCsv) {
      // run.csv, or one of the tables picked again (run.ops.csv): the prefix "run".
      QString prefix = path;
      for (const char* table : {".variants.csv", ".ops.csv", ".kernels.csv", ".steps.csv", ".gradients.csv", ".csv"})
        if (prefix.endsWith(QLatin1String(table))) {
          prefix.chop(static_cast<int>(qstrlen(table)));
          break;
        }
      choice.target = prefix;
    }
    return choice;
  }
  return std::nullopt;
}

std::optional<ExportChoice> askExport(QWidget* parent, const QString& source, bool comparison) {
  const QStringList filters = exportFilters(comparison);
  QString selected = filters.front();
  const QFileInfo file(source);
  const QString base = file.dir().filePath(file.completeBaseName());
  // Named as the first format offered writes it (a session's trace, a comparison's JSON).
  const FormatFilter& first = *std::find_if(std::begin(kFilters), std::end(kFilters),
                                            [&](const FormatFilter& f) { return f.comparison || !comparison; });
  const QString path = QFileDialog::getSaveFileName(
      parent, QCoreApplication::translate("ExportDialog", "Export %1").arg(file.fileName()),
      base + QLatin1String(first.suffix), filters.join(QStringLiteral(";;")), &selected);
  if (path.isEmpty()) return std::nullopt;
  return exportChoice(selected, path);
}

}  // namespace ampscope::ui
