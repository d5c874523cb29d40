// The exit codes the README promises, for every command: 0 finished (or
// stopped with Ctrl-C), 1 the run or the work failed, 2 bad flags. A script
// tells them apart; CLI11's own codes (105 for a failed check, ...) must never
// leak out. Every failure is one line naming the thing.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::test::ampscope;
using ampscope::test::CliResult;
using ampscope::test::ScratchDir;

constexpr const char* kTiny = "--model mlp --device cpu --width 16 --batch-size 8 --synthetic-samples 64";

ScratchDir& scratch() {
  static ScratchDir dir;
  return dir;
}

std::string in_scratch(const std::string& name) { return (scratch() / name).string(); }

// A recorded session and a comparison, made once by the commands under test.
const std::string& session() {
  static const std::string path = [] {
    const std::string p = in_scratch("s.ampscope");
    const CliResult r = ampscope(fmt::format("profile {} --steps 2 --quiet --out '{}'", kTiny, p));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return p;
  }();
  return path;
}

std::string garbage(const std::string& name) {
  const std::string p = in_scratch(name);
  ampscope::test::write_file(p, "this is not what you think it is\n");
  return p;
}

int count_lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

struct Case {
  const char* name;
  std::function<std::string()> args;  // made when the case runs: some need a session first
  int exit_code;
  const char* expected;  // a piece of the output
};

class CliExitCodes : public ::testing::TestWithParam<Case> {};

TEST_P(CliExitCodes, AreTheDocumentedOnes) {
  const Case& c = GetParam();
  const std::string args = c.args();
  const CliResult r = ampscope(args);
  EXPECT_EQ(r.exit_code, c.exit_code) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(c.expected), std::string::npos) << args << "\n" << r.output;
  if (c.exit_code == 2) {
    // Nothing ran: the whole output is the one-line message.
    EXPECT_EQ(count_lines(r.output), 1) << args << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("ampscope: error: ", 0), 0u) << r.output;
  }
  if (c.exit_code == 1) {
    EXPECT_NE(r.output.find("ampscope: error: "), std::string::npos) << r.output;
  }
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    Commands, CliExitCodes,
    ::testing::Values(
        // train
        Case{"train_finished", [] { return fmt::format("train {} --steps 2", kTiny); }, 0, "finished after 2 of 2"},
        Case{"train_missing_data", [] { return fmt::format("train {} --steps 2 --data mnist --data-path /nonexistent/train-images-idx3-ubyte", kTiny); },
             1, "/nonexistent/train-images-idx3-ubyte"},
        Case{"train_data_given_a_path", [] { return fmt::format("train {} --data /nonexistent/train.csv", kTiny); }, 2,
             "--data-path"},
        Case{"train_unknown_flag", [] { return fmt::format("train {} --frobnicate 3", kTiny); }, 2, "frobnicate"},
        Case{"train_not_a_number", [] { return fmt::format("train {} --steps many", kTiny); }, 2, "--steps"},
        Case{"train_unknown_precision", [] { return fmt::format("train {} --precision fp8", kTiny); }, 2, "fp8"},
        Case{"train_missing_config", [] { return fmt::format("train {} --config /nonexistent/run.toml", kTiny); }, 2,
             "/nonexistent/run.toml"},
        Case{"train_impossible_settings", [] { return fmt::format("train {} --scaler --no-scaler", kTiny); }, 2,
             "contradict"},
        Case{"no_command", [] { return std::string(); }, 2, "subcommand"},
        Case{"unknown_command", [] { return std::string("trian"); }, 2, "trian"},
        // profile
        Case{"profile_finished", [] { return fmt::format("profile {} --steps 2 --quiet --out '{}'", kTiny, in_scratch("p.ampscope")); },
             0, "session "},
        Case{"profile_missing_data", [] { return fmt::format("profile {} --steps 2 --data text --data-path /nonexistent/corpus.txt --out '{}'", kTiny, in_scratch("p1.ampscope")); },
             1, "/nonexistent/corpus.txt"},
        Case{"profile_exists", [] { return fmt::format("profile {} --steps 2 --out '{}'", kTiny, session()); }, 2, "--force"},
        Case{"profile_bad_window", [] { return fmt::format("profile {} --every 0 --out '{}'", kTiny, in_scratch("p2.ampscope")); },
             2, "--every"},
        // compare
        Case{"compare_finished", [] { return fmt::format("compare {} --steps 3 --warmup 1 --precisions fp32,bf16 --out '{}'", kTiny, in_scratch("c.ampscope")); },
             0, "speedup"},
        Case{"compare_missing_data", [] { return fmt::format("compare {} --steps 3 --warmup 1 --data mnist --data-path /nonexistent/train-images-idx3-ubyte --out '{}'", kTiny, in_scratch("c1.ampscope")); },
             1, "/nonexistent/train-images-idx3-ubyte"},
        Case{"compare_unknown_variant", [] { return fmt::format("compare {} --precisions fp32,fp8 --out '{}'", kTiny, in_scratch("c2.ampscope")); },
             2, "fp8"},
        // summary
        Case{"summary_of_a_session", [] { return fmt::format("summary '{}'", session()); }, 0, "steps     2"},
        Case{"summary_of_garbage", [] { return fmt::format("summary '{}'", garbage("g1.ampscope")); }, 1, "g1.ampscope"},
        Case{"summary_of_nothing", [] { return std::string("summary"); }, 2, "session"},
        // export
        Case{"export_json", [] { return fmt::format("export '{}' --format json -o '{}'", session(), in_scratch("s.json")); }, 0, "wrote"},
        Case{"export_missing_session", [] { return fmt::format("export '{}'", in_scratch("missing.ampscope")); }, 1, "missing.ampscope"},
        Case{"export_unknown_format", [] { return fmt::format("export '{}' --format xml", session()); }, 2, "xml"},
        // report
        Case{"report_of_a_session", [] { return fmt::format("report '{}' -o '{}'", session(), in_scratch("r.html")); }, 0, "wrote"},
        Case{"report_of_garbage", [] { return fmt::format("report '{}' -o '{}'", garbage("g2.ampscope"), in_scratch("g2.html")); }, 1, "g2.ampscope"},
        Case{"report_exists", [] {
               ampscope::test::write_file(in_scratch("keep.html"), "precious");
               return fmt::format("report '{}' -o '{}'", session(), in_scratch("keep.html"));
             }, 2, "--force"}),
    [](const auto& info) { return std::string(info.param.name); });

// Ctrl-C is a clean stop: exit 0, after the step in progress, with the steps so far.
TEST(CliExitCodesSignals, InterruptStopsTheRunWithZero) {
  ScratchDir dir;
  const auto metrics = dir / "m.jsonl";
  ampscope::test::BackgroundCli run(
      fmt::format("train {} --steps 1000000 --quiet --metrics '{}'", kTiny, metrics.string()), dir / "log.txt");
  ASSERT_TRUE(run.started());
  auto lines = [&] {
    std::ifstream in(metrics);
    return count_lines(std::string(std::istreambuf_iterator<char>(in), {}));
  };
  ASSERT_TRUE(ampscope::test::wait_for_condition([&] { return lines() >= 3; }));
  ASSERT_TRUE(run.signal(SIGINT));
  EXPECT_EQ(run.wait_exit(), 0);
  std::ifstream log(dir / "log.txt");
  const std::string output(std::istreambuf_iterator<char>(log), {});
  EXPECT_NE(output.find("stopped after"), std::string::npos) << output;
}

}  // namespace
