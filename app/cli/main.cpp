// ampscope: headless mixed-precision training and profiling (no Qt).
#include <CLI/CLI.hpp>
#include <c10/util/Exception.h>
#include <fmt/format.h>

#include <csignal>

#include "app/cli/compare_command.h"
#include "app/cli/config_file_check.h"
#include "app/cli/diff_command.h"
#include "app/cli/message_excerpt.h"
#include "app/cli/profile_command.h"
#include "app/cli/report_command.h"
#include "app/cli/run_command.h"
#include "app/cli/session_commands.h"
#include "app/cli/train_command.h"
#include "app/cli/version_text.h"
#include "engine/errors.h"

int main(int argc, char** argv) {
  // Under a file-size limit (ulimit -f) a write past it would kill the process with
  // SIGXFSZ, leaving a temporary file and no word; ignored, the write fails with EFBIG,
  // which every writer checks and reports with the path (exit 1).
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"ampscope: see what mixed-precision training (autocast + loss scaling, fp16/bf16) does"};
  app.require_subcommand(1);
  // One line per parse error, like every other error of ampscope.
  app.failure_message([](const CLI::App* root, const CLI::Error& e) {
    const auto commands = root->get_subcommands();
    if (commands.empty() && !root->remaining().empty())
      return fmt::format("ampscope: error: unknown command '{}'; the commands are train, profile, compare, "
                         "run, summary, export, report and diff (see ampscope --help)\n",
                         root->remaining().front());
    return fmt::format("ampscope: error: {} (see ampscope{} --help)\n",
                       ampscope::cli::with_long_words_excerpted(e.what()),
                       commands.empty() ? "" : " " + commands.front()->get_name());
  });
  app.set_version_flag("--version", ampscope::cli::version_text);
  app.set_config("--config", "",
                 "Read flags from a TOML file: a [train] section with the long flag names "
                 "without '--' as keys (precision = \"bf16\"); flags on the command line win");
  ampscope::cli::TrainCommand train(app);
  ampscope::cli::ProfileCommand profile(app);
  ampscope::cli::CompareCommand compare(app);
  ampscope::cli::ExportCommand export_command(app);
  ampscope::cli::SummaryCommand summary(app);
  ampscope::cli::ReportCommand report(app);
  ampscope::cli::RunCommand run_command(app);
  ampscope::cli::DiffCommand diff(app);
  try {
    argc = run_command.drop_separator_before_script(argc, argv);
    ampscope::cli::check_config_file(app, argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with 0. Every other parse or validation
    // failure is a bad flag: exit 2, as documented (CLI11's own codes, such as
    // 105 for a failed check, mean nothing to a user's script).
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const ampscope::engine::ConfigError& e) {
    fmt::print(stderr, "ampscope: error: {}\n", e.what());
    return 2;
  }
  try {
    if (train.selected()) return train.run();
    if (profile.selected()) return profile.run();
    if (compare.selected()) return compare.run();
    if (export_command.selected()) return export_command.run();
    if (summary.selected()) return summary.run();
    if (report.selected()) return report.run();
    if (run_command.selected()) return run_command.run();
    if (diff.selected()) return diff.run();
  } catch (const ampscope::engine::ConfigError& e) {
    fmt::print(stderr, "ampscope: error: {}\n", e.what());
    return 2;
  } catch (const ampscope::engine::EngineError& e) {
    fmt::print(stderr, "ampscope: error: {}\n", e.what());
    return 1;
  } catch (const c10::Error& e) {
    fmt::print(stderr, "ampscope: error: {}\n", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ampscope: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
