// ampscope: headless mixed-precision training and profiling (no Qt).
#include <CLI/CLI.hpp>
#include <c10/util/Exception.h>
#include <fmt/format.h>

#include "app/cli/compare_command.h"
#include "app/cli/profile_command.h"
#include "app/cli/report_command.h"
#include "app/cli/run_command.h"
#include "app/cli/session_commands.h"
#include "app/cli/train_command.h"
#include "engine/errors.h"

int main(int argc, char** argv) {
  CLI::App app{"ampscope: see what mixed-precision training (autocast + loss scaling, fp16/bf16) does"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ampscope 0.1.0");
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (train.selected()) return train.run();
    if (profile.selected()) return profile.run();
    if (compare.selected()) return compare.run();
    if (export_command.selected()) return export_command.run();
    if (summary.selected()) return summary.run();
    if (report.selected()) return report.run();
    if (run_command.selected()) return run_command.run();
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
