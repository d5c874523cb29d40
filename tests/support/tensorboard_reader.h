#pragma once
// TensorBoard's own reader (EventAccumulator, tests/python/tensorboard_reader.py)
// on a log directory, as JSON: {"scalars": {tag: [[step, value]...]},
// "histograms": {tag: [[step, num, [limits], [counts], min, max]...]}}.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "tests/support/test_support.h"

namespace ampscope::test {

// nullopt when no Python is configured (AMPSCOPE_PYTHON); a failed read fails the test.
inline std::optional<nlohmann::json> read_with_tensorboard(const std::filesystem::path& dir) {
  const auto python = python_with_torch();
  if (!python) return std::nullopt;
  std::string out;
  const std::string cmd = fmt::format("'{}' '{}' '{}' 2>/dev/null", *python,
                                      test_source_path("python/tensorboard_reader.py").string(), dir.string());
  EXPECT_EQ(run_command(cmd, &out), 0) << cmd << "\n(is tensorboard installed? scripts/deps.env)";
  auto json = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << out;
  return json;
}

}  // namespace ampscope::test
