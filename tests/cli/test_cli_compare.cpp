// `ampscope compare` as a user runs it: the comparison issue's acceptance run on
// the CPU (smaller, same shape), its file read back by `summary`, and bad flags.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::test::ScratchDir;

using Result = ampscope::test::CliResult;
using ampscope::test::ampscope;

constexpr const char* kTinyGpt = "--model gpt --device cpu --layers 1 --width 32 --heads 4 --seq-len 16 --batch-size 8";

TEST(CliCompare, Fp32VersusBf16PrintsSpeedupsAndWritesAComparison) {
  ScratchDir dir;
  const std::string out = (dir / "c.ampscope").string();
  const Result r = ampscope(fmt::format("compare {} --precisions fp32,bf16 --steps 8 --warmup 2 --repeats 2 "
                                        "--profile-steps 2 --out '{}'",
                                        kTinyGpt, out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("speedup vs fp32"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[6/6] bf16: op table from 2 profiled steps"), std::string::npos) << r.output;
  // The per-op table: which ops make its top 12 depends on timing, so only that it has rows.
  EXPECT_NE(r.output.find("ops by CPU time per step"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("forward   blocks.0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1.00x"), std::string::npos) << r.output;  // fp32 against itself

  const Result summary = ampscope(fmt::format("summary '{}'", out));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("bf16"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("2 warm-up steps excluded"), std::string::npos) << summary.output;

  // A second run must not silently replace the first.
  const Result again = ampscope(fmt::format("compare {} --precisions fp32 --steps 4 --warmup 1 --out '{}'", kTinyGpt, out));
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("--force"), std::string::npos) << again.output;
}

// Impossible comparison settings are rows of docs/bad-input.md (tests/cli/test_bad_input_table.cpp).

}  // namespace
