#pragma once
// Runs the built `ampscope` (AMPSCOPE_CLI, set per test target) as a user would.
#include <fmt/format.h>

#include <string>

#include "tests/support/test_support.h"

namespace ampscope::test {

struct CliResult {
  int exit_code;
  std::string output;  // stdout and stderr together
};

inline CliResult ampscope(const std::string& args) {
  CliResult r;
  r.exit_code = run_command(fmt::format("'{}' {} 2>&1", AMPSCOPE_CLI, args), &r.output);
  return r;
}

}  // namespace ampscope::test
