#include "app/cli/report_command.h"

#include <fmt/format.h>

#include <filesystem>

#include "app/cli/output_path.h"
#include "engine/errors.h"
#include "profiler/report/html_report.h"
#include "profiler/report/report_data.h"

namespace ampscope::cli {
namespace {

std::string default_output(const std::string& input) {
  std::filesystem::path p(input);
  p.replace_extension(".html");
  return p.string();
}

}  // namespace

ReportCommand::ReportCommand(CLI::App& parent) {
  command_ = parent.add_subcommand("report",
                                   "Write a self-contained HTML report (no script, no external "
                                   "file) of a session or a comparison");
  command_->add_option("file", input_, "The .ampscope session or comparison file")->required();
  command_->add_option("--out,-o", out_, "The HTML file to write (default: FILE with .html)");
  command_->add_flag("--force", force_, "Overwrite the output file if it exists");
}

int ReportCommand::run() {
  const std::string out = out_.empty() ? default_output(input_) : out_;
  // Refused before the work, so a typo in -o costs nothing and overwrites nothing.
  check_output_file("--out", out, force_);
  if (std::filesystem::weakly_canonical(out) == std::filesystem::weakly_canonical(input_))
    throw engine::ConfigError("the report would overwrite its own input; choose another --out");
  const auto data = profiler::load_report(input_);
  profiler::write_html_report(data, out);
  fmt::print("wrote {} ({} report of {})\n", out,
             data.kind == profiler::ReportData::Kind::kComparison ? "comparison" : "session",
             input_);
  return 0;
}

}  // namespace ampscope::cli
