#include "profiler/report/file_export.h"

#include <stdexcept>

#include "profiler/export/chrome_trace.h"
#include "profiler/export/comparison_export.h"
#include "profiler/export/csv_export.h"
#include "profiler/export/json_summary.h"
#include "profiler/export/tensorboard/tensorboard_export.h"
#include "profiler/report/findings.h"
#include "profiler/report/report_data.h"
#include "profiler/store/comparison_store.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_view.h"

namespace ampscope::profiler {
namespace {

constexpr const char* kSessionTables[] = {".ops.csv", ".kernels.csv", ".steps.csv", ".gradients.csv"};
constexpr const char* kComparisonTables[] = {".variants.csv", ".ops.csv", ".steps.csv"};

// "a.ops.csv, a.kernels.csv, ..." for the CSV line.
std::string joined(const std::vector<std::string>& paths) {
  std::string s;
  for (const std::string& p : paths) s += (s.empty() ? "" : ", ") + p;
  return s;
}

std::string export_comparison(const std::string& source, ExportFormat format, const std::string& target) {
  if (const std::string why = comparison_export_refusal(source, format); !why.empty()) throw std::invalid_argument(why);
  Comparison comparison = read_comparison(source);
  if (format == ExportFormat::kCsv) {
    export_comparison_csv(comparison, target);
    return "wrote " + joined(export_outputs(format, true, target));
  }
  // The report's summaries and matched ops, and its findings as `summary` and the report show
  // them: the verdict, each reduced precision's recommendations.
  const ReportData report = comparison_report(std::move(comparison), source);
  nlohmann::ordered_json summary = comparison_summary(*report.comparison, report.variant_summaries, report.op_rows);
  summary["findings"] = findings_json(comparison_findings(report));
  write_json_summary(summary, target);
  return "wrote " + target;
}

}  // namespace

std::optional<ExportFormat> export_format_named(std::string_view name) {
  if (name == "chrome") return ExportFormat::kChromeTrace;
  if (name == "csv") return ExportFormat::kCsv;
  if (name == "json") return ExportFormat::kJson;
  if (name == "tensorboard") return ExportFormat::kTensorBoard;
  return std::nullopt;
}

std::vector<std::string> export_outputs(ExportFormat format, bool comparison, const std::string& target) {
  if (format != ExportFormat::kCsv) return {target};
  std::vector<std::string> paths;
  if (comparison) {
    for (const char* table : kComparisonTables) paths.push_back(target + table);
  } else {
    for (const char* table : kSessionTables) paths.push_back(target + table);
  }
  return paths;
}

std::string comparison_export_refusal(const std::string& source, ExportFormat format) {
  if (format != ExportFormat::kChromeTrace && format != ExportFormat::kTensorBoard) return "";
  return "'" + source + "' holds a precision comparison, which has no " +
         (format == ExportFormat::kChromeTrace ? "trace" : "TensorBoard events") +
         ": export it as JSON or CSV, or write its report";
}

std::string export_recorded_file(const std::string& source, ExportFormat format, const std::string& target,
                                 ExportStepRange steps) {
  if (is_comparison_file(source)) return export_comparison(source, format, target);
  const SessionReader session = SessionReader::open(source);
  switch (format) {
    case ExportFormat::kChromeTrace: {
      ChromeTraceOptions options;
      if (steps.first_step > 0) options.first_step = steps.first_step;
      if (steps.last_step > 0) options.last_step = steps.last_step;
      export_chrome_trace(session, target, options);
      return "wrote " + target + " (open it in https://ui.perfetto.dev or chrome://tracing)";
    }
    case ExportFormat::kTensorBoard: {
      const std::string path = tensorboard::export_session(session, target);
      return "wrote " + path + " (tensorboard --logdir " + target + ")";
    }
    case ExportFormat::kJson: {
      SessionViewOptions options;
      options.top_kernels = 10;
      options.gradient_summaries = 0;
      const SessionView view = load_session_view(session, options);
      nlohmann::ordered_json summary = session_summary(view, options.top_kernels);
      summary["findings"] = findings_json(session_findings(view));  // as the report has them
      write_json_summary(summary, target);
      return "wrote " + target;
    }
    case ExportFormat::kCsv: {
      const std::vector<std::string> paths = export_outputs(format, false, target);
      export_op_table_csv(session, paths[0]);
      export_kernels_csv(session, paths[1]);
      export_steps_csv(session, paths[2]);
      export_gradients_csv(session, paths[3]);
      return "wrote " + joined(paths);
    }
  }
  return "";
}

}  // namespace ampscope::profiler
