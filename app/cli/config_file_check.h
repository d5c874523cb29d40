#pragma once
// CLI11 reads a --config file leniently: a misspelt key, a section no command has, a line
// that is not TOML are skipped without a word and the run goes on with defaults. This
// checks the file first against the options the commands really have, so each of those
// is a one-line error (ConfigError: exit 2) naming the file, the line and the fix.
#include <CLI/CLI.hpp>

namespace ampscope::cli {

// Checks the file given by --config FILE or --config=FILE in argv, if any.
void check_config_file(CLI::App& app, int argc, char** argv);

}  // namespace ampscope::cli
