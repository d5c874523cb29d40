#include "app/cli/report_command.h"

#include <fmt/format.h>

#include <filesystem>

#include "app/cli/output_path.h"
#include "app/cli/session_commands.h"
#include "profiler/report/html_report.h"
#include "profiler/store/rank_comparison.h"
#include "profiler/report/report_data.h"

namespace ampscope::cli {
namespace {

std::string default_output(const std::vector<std::string>& inputs) {
  std::filesystem::path p(inputs.front());
  p.replace_extension(".html");
  if (inputs.size() == 1) return p.string();
  // run.rank0.ampscope -> run.ranks.html
  std::filesystem::path base = p;
  base.replace_extension();
  if (profiler::rank_from_path(inputs.front())) base.replace_extension();
  return base.string() + ".ranks.html";
}

}  // namespace

ReportCommand::ReportCommand(CLI::App& parent) {
  command_ = parent.add_subcommand("report",
                                   "Write a self-contained HTML report (no script, no external "
                                   "file) of a session or a comparison");
  command_->add_option("file", inputs_,
                       "The .ampscope session or comparison file; several (one per rank under torchrun) make a "
                       "report of the ranks side by side")
      ->required();
  command_->add_option("--out,-o", out_, "The HTML file to write (default: FILE with .html)");
  command_->add_flag("--force", force_, "Overwrite the output file if it exists");
}

int ReportCommand::run() {
  const std::string out = out_.empty() ? default_output(inputs_) : out_;
  // Refused before the work, so a typo in -o costs nothing and overwrites nothing.
  check_output_file("--out", out, force_, inputs_);
  const auto data = inputs_.size() > 1 ? profiler::rank_report(inputs_) : profiler::load_report(inputs_.front());
  warn_if_incomplete(inputs_.front(), data.health);
  profiler::write_html_report(data, out);
  const char* kind = data.kind == profiler::ReportData::Kind::kComparison ? "comparison"
                     : data.kind == profiler::ReportData::Kind::kRanks    ? "ranks"
                                                                          : "session";
  fmt::print("wrote {} ({} report of {})\n", out, kind,
             inputs_.size() > 1 ? std::to_string(inputs_.size()) + " rank files" : inputs_.front());
  return 0;
}

}  // namespace ampscope::cli
