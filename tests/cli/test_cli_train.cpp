// `ampscope train` as a user runs it: the acceptance runs of the engine issue.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::test::ScratchDir;

using Result = ampscope::test::CliResult;
using ampscope::test::ampscope;

std::vector<nlohmann::json> read_jsonl(const std::filesystem::path& path) {
  std::vector<nlohmann::json> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

TEST(CliTrain, GptBf16OnTheCpuShowsAFallingLoss) {
  ScratchDir dir;
  const auto metrics = dir / "m.jsonl";
  const Result r = ampscope(fmt::format("train --model gpt --precision bf16 --device cpu --steps 60 --metrics '{}'",
                                        metrics.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("finished after 60 of 60 steps"), std::string::npos) << r.output;
  const auto rows = read_jsonl(metrics);
  ASSERT_EQ(rows.size(), 60u);
  double first = 0, last = 0;
  for (int i = 0; i < 5; ++i) first += rows[i]["loss"].get<double>() / 5;
  for (int i = 55; i < 60; ++i) last += rows[i]["loss"].get<double>() / 5;
  EXPECT_LT(last, 0.8 * first) << first << " -> " << last;
}

TEST(CliTrain, Fp16ScalerHistoryFollowsPyTorchRuleStepByStep) {
  // A scale of 2^24 overflows fp16 gradients at first; the scaler must back off
  // on every overflow and grow after each 10 clean steps, never to infinity.
  ScratchDir dir;
  const auto metrics = dir / "m.jsonl";
  const Result r = ampscope(fmt::format(
      "train --model mlp --precision fp16 --device cpu --steps 60 --init-scale 16777216 "
      "--growth-interval 10 --metrics '{}'", metrics.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rows = read_jsonl(metrics);
  ASSERT_EQ(rows.size(), 60u);
  double scale = 16777216.0;
  int64_t tracker = 0, overflows = 0, growths = 0;
  for (const auto& row : rows) {
    SCOPED_TRACE(row.dump());
    ASSERT_EQ(row["loss_scale"].get<double>(), scale);
    ASSERT_EQ(row["growth_tracker"].get<int64_t>(), tracker);
    const bool inf = row["found_inf"].get<bool>();
    ASSERT_EQ(row["skipped"].get<bool>(), inf);
    if (inf) {
      scale *= 0.5;
      tracker = 0;
      ++overflows;
    } else if (++tracker == 10) {
      scale *= 2.0;
      tracker = 0;
      ++growths;
    }
  }
  EXPECT_GT(overflows, 0) << "2^24 should overflow fp16 gradients at least once";
  EXPECT_GT(growths, 0) << "60 steps with interval 10 should grow the scale at least once";
}

TEST(CliTrain, ConfigFileSetsFlagsAndTheCommandLineWins) {
  ScratchDir dir;
  ampscope::test::write_file(dir / "run.toml", "[train]\nmodel = \"mlp\"\nprecision = \"bf16\"\nsteps = 3\ndevice = \"cpu\"\n");
  const auto metrics = dir / "m.jsonl";
  const Result r = ampscope(fmt::format("train --config '{}' --steps 4 --metrics '{}'", (dir / "run.toml").string(),
                                        metrics.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("precision bf16"), std::string::npos) << r.output;
  EXPECT_EQ(read_jsonl(metrics).size(), 4u);
}

TEST(CliTrain, HelpDocumentsEveryGroup) {
  const Result r = ampscope("train --help");
  ASSERT_EQ(r.exit_code, 0);
  for (const char* flag : {"--model", "--data-path", "--precision", "--init-scale", "--growth-interval",
                           "--clip-grad-norm", "--accumulate", "--schedule", "--metrics", "--config", "--seed"})
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag;
}

// The bad inputs of `train` are rows of docs/bad-input.md (tests/cli/test_bad_input_table.cpp).

// The speed options train as the default path does, and validation shows in the metrics on
// the steps it ran: lower than the first training loss once the model has learnt.
TEST(CliTrain, AttentionFusedChannelsLastAndValidation) {
  ScratchDir dir;
  for (const std::string& args :
       {std::string("--model gpt --attention math --precision bf16 --fused --lr 0.01"),
        std::string("--model gpt --attention sdpa --precision fp32 --optimizer sgd --lr 0.1"),
        std::string("--model convnet --channels-last --precision bf16 --optimizer adam --fused --lr 0.01")}) {
    SCOPED_TRACE(args);
    const auto metrics = dir / "m.jsonl";
    // Small sizes: bf16 is emulated (slow) on CPUs without AVX-512 BF16.
    const Result r = ampscope(fmt::format("train --device cpu --steps 30 --eval-every 10 --eval-batches 2 "
                                          "--layers 1 --width 32 --seq-len 16 --batch-size 16 {} --force --metrics '{}'",
                                          args, metrics.string()));  // --force: one file for the three runs
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("eval after step 30: loss"), std::string::npos) << r.output;
    const auto rows = read_jsonl(metrics);
    ASSERT_EQ(rows.size(), 30u);
    for (const auto& row : rows) {
      const int64_t step = row["step"].get<int64_t>();
      EXPECT_EQ(row.contains("eval_loss"), step % 10 == 0) << row.dump();
    }
    EXPECT_LT(rows[29]["eval_loss"].get<double>(), rows[0]["loss"].get<double>());
  }
}

TEST(CliTrain, CudaWithoutAGpuIsAClearError) {
  const Result probe = ampscope("train --device cuda --steps 1");
  if (probe.exit_code == 0) GTEST_SKIP() << "a CUDA GPU is present";
  EXPECT_NE(probe.output.find("--device cuda"), std::string::npos) << probe.output;
  EXPECT_NE(probe.output.find("use --device cpu"), std::string::npos) << probe.output;
}

TEST(CliTrain, ShapeMismatchBetweenModelAndDataIsAnError) {
  ScratchDir dir;
  const auto text = dir / "corpus.txt";
  std::string body;
  for (int i = 0; i < 200; ++i) body += "the quick brown fox jumps over the lazy dog. ";
  ampscope::test::write_file(text, body);
  const Result r = ampscope(fmt::format("train --device cpu --steps 2 --model convnet --data text --data-path '{}'",
                                        text.string()));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("error:"), std::string::npos) << r.output;
}

}  // namespace
