// `ampscope compare` as a user runs it: the comparison issue's acceptance run on
// the CPU (smaller, same shape), its file read back by `summary`, and bad flags.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "profiler/analysis/comparison.h"
#include "profiler/report/findings.h"
#include "profiler/report/report_data.h"
#include "profiler/store/comparison_store.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::test::ScratchDir;

using Result = ampscope::test::CliResult;
using ampscope::test::ampscope;

constexpr const char* kTinyGpt = "--model gpt --device cpu --layers 1 --width 32 --heads 4 --seq-len 16 --batch-size 8";

// The lines under "verdict", up to the blank line after them.
std::string verdict_of(const std::string& output) {
  const size_t at = output.find("\nverdict\n");
  if (at == std::string::npos) return "";
  const size_t from = at + 9;
  return output.substr(from, output.find("\n\n", from) - from + 1);
}

TEST(CliCompare, Fp32VersusBf16PrintsSpeedupsAndWritesAComparison) {
  ScratchDir dir;
  const std::string out = (dir / "c.ampscope").string();
  const Result r = ampscope(fmt::format("compare {} --precisions fp32,bf16 --steps 8 --warmup 2 --repeats 2 "
                                        "--profile-steps 2 --out '{}'",
                                        kTinyGpt, out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("speedup vs fp32"), std::string::npos) << r.output;
  // A CPU run's memory column is the process's resident set, not tensors' bytes.
  EXPECT_NE(r.output.find("peak RSS"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("peak mem"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[6/6] bf16: op table from 2 profiled steps"), std::string::npos) << r.output;
  // The per-op table: which ops make its top 12 depends on timing, so only that it has rows.
  EXPECT_NE(r.output.find("ops by CPU time per step"), std::string::npos) << r.output;
  // Rows carry module paths (which phase makes the top 12 depends on the machine's load too).
  EXPECT_NE(r.output.find("blocks.0."), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1.00x"), std::string::npos) << r.output;  // fp32 against itself

  const Result summary = ampscope(fmt::format("summary '{}'", out));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("bf16"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("2 warm-up steps excluded"), std::string::npos) << summary.output;
  // The verdict, as the report and the GUI say it: printed by compare and by summary alike.
  const std::string said = verdict_of(r.output);
  EXPECT_EQ(said.rfind("  Fastest: ", 0), 0u) << r.output;
  EXPECT_NE(said.find("  bf16"), std::string::npos) << said;
  EXPECT_EQ(verdict_of(summary.output), said);
  // What to change, last: each reduced precision's recommendations from its profiled pass, as
  // the report and the GUI's Findings pane list them.
  const std::string to_change = ampscope::profiler::recommendations_text(
      ampscope::profiler::comparison_findings(ampscope::profiler::load_report(out)));
  EXPECT_EQ(to_change.rfind("What to change", 0), 0u) << to_change;
  EXPECT_EQ(to_change.find("profiled pass"), std::string::npos) << to_change;  // bf16's was read
  EXPECT_NE(r.output.find("\n\n" + to_change + "\ncomparison "), std::string::npos) << r.output;  // then the file
  ASSERT_GE(summary.output.size(), to_change.size());
  EXPECT_EQ(summary.output.substr(summary.output.size() - to_change.size()), to_change) << summary.output;
  const std::string html = (dir / "c.html").string();
  ASSERT_EQ(ampscope(fmt::format("report '{}' -o '{}'", out, html)).exit_code, 0);
  const std::string first = said.substr(2, said.find('\n') - 2);  // "Fastest: fp32, a median step of ..."
  EXPECT_NE(ampscope::test::read_file(html).find(first), std::string::npos) << first;

  // A second run must not silently replace the first.
  const Result again = ampscope(fmt::format("compare {} --precisions fp32 --steps 4 --warmup 1 --out '{}'", kTinyGpt, out));
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("--force"), std::string::npos) << again.output;
}

// A comparison exports as numbers for scripts and spreadsheets: its JSON summary (the
// precisions' step times, speedups and ops, the report's findings) and CSV tables, the same
// figures `summary` and the report show; a trace or TensorBoard events it has none of says so.
TEST(CliCompare, AComparisonExportsItsFiguresAsJsonAndCsv) {
  ScratchDir dir;
  const std::string out = (dir / "c.ampscope").string();
  ASSERT_EQ(ampscope(fmt::format("compare {} --precisions fp32,bf16 --steps 6 --warmup 2 --repeats 2 "
                                 "--profile-steps 2 --out '{}'",
                                 kTinyGpt, out))
                .exit_code,
            0);
  namespace p = ampscope::profiler;
  const p::Comparison comparison = p::read_comparison(out);
  const std::vector<p::VariantSummary> summaries = p::summarize(comparison);
  const std::vector<p::OpComparisonRow> ops = p::match_ops(comparison);
  ASSERT_EQ(summaries.size(), 2u);

  const std::string json_path = (dir / "c.json").string();
  const Result json = ampscope(fmt::format("export --format json '{}' -o '{}'", out, json_path));
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto j = nlohmann::json::parse(ampscope::test::read_file(json_path));
  EXPECT_EQ(j["kind"], "comparison");
  EXPECT_EQ(j["warmup_steps"], 2);
  EXPECT_EQ(j["effective_batch"], comparison.effective_batch);
  ASSERT_EQ(j["variants"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(summaries[i].variant);
    const auto& v = j["variants"][i];
    EXPECT_EQ(v["variant"], summaries[i].variant);
    EXPECT_EQ(v["finished_repeats"], 2);
    EXPECT_EQ(v["step_ms"]["median"].get<double>(), summaries[i].step_ms.median);
    EXPECT_EQ(v["speedup_vs_fp32"]["median"].get<double>(), summaries[i].speedup.median);
    EXPECT_EQ(v["samples_per_second"].get<double>(), summaries[i].samples_per_second);
    EXPECT_EQ(v["profiled_steps"], 2);
  }
  ASSERT_EQ(j["ops"].size(), ops.size());
  ASSERT_FALSE(ops.empty());
  EXPECT_EQ(j["ops"][0]["name"], ops[0].name);
  EXPECT_EQ(j["ops"][0]["variants"]["bf16"]["time_ns_per_step"].get<double>(), ops[0].cells[1].time_ns_per_step);
  const p::SessionFindings findings = p::comparison_findings(p::load_report(out));
  EXPECT_EQ(j["findings"]["verdict"].get<std::vector<std::string>>(), findings.verdict);
  EXPECT_EQ(j["findings"]["recommendations"].size(), findings.recommendations.size());

  const std::string base = (dir / "c").string();
  const Result csv = ampscope(fmt::format("export --format csv '{}' -o '{}'", out, base));
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  const std::string variants = ampscope::test::read_file(base + ".variants.csv");
  EXPECT_EQ(variants.rfind("variant,precision,tf32,scaler,finished_repeats,measured_steps,step_ms_median,", 0), 0u);
  EXPECT_NE(variants.find("\r\nbf16,bf16,false,false,2,8,"), std::string::npos) << variants;
  const std::string steps = ampscope::test::read_file(base + ".steps.csv");
  EXPECT_EQ(std::count(steps.begin(), steps.end(), '\n'), 1 + 2 * 2 * 6) << "every step of every repeat";
  EXPECT_NE(steps.find("\r\nfp32,0,2,false,"), std::string::npos) << "warm-up steps marked";
  EXPECT_NE(steps.find("\r\nfp32,0,3,true,"), std::string::npos);
  const std::string op_rows = ampscope::test::read_file(base + ".ops.csv");
  size_t present = 0;
  for (const auto& row : ops)
    for (const auto& cell : row.cells) present += cell.present;
  EXPECT_EQ(static_cast<size_t>(std::count(op_rows.begin(), op_rows.end(), '\n')), 1 + present);

  for (const char* format : {"chrome", "tensorboard"}) {
    const Result refused = ampscope(fmt::format("export --format {} '{}' -o '{}'", format, out,
                                                (dir / (std::string("x.") + format)).string()));
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_NE(refused.output.find("holds a precision comparison"), std::string::npos) << refused.output;
    EXPECT_FALSE(std::filesystem::exists(dir / (std::string("x.") + format)));
  }
}

// The table's row for a variant: the line that starts with its name and a space.
std::string row_of(const std::string& output, const std::string& variant) {
  for (size_t at = 0; at < output.size();) {
    const size_t end = std::min(output.find('\n', at), output.size());
    const std::string line = output.substr(at, end - at);
    if (line.rfind(variant + " ", 0) == 0) return line;
    at = end + 1;
  }
  return "";
}

TEST(CliCompare, InferenceOfATinyMlpGivesOneRowPerPrecisionAndSummaryReadsItBack) {
  ScratchDir dir;
  const std::string out = (dir / "inference.ampscope").string();
  const Result r = ampscope(fmt::format("compare --inference --model mlp --device cpu --batch-size 32 --width 64 "
                                        "--precisions fp32,fp16,bf16 --steps 12 --warmup 2 --repeats 2 --out '{}'",
                                        out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("inference, batch of 32: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2 warm-up batches excluded"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("batch ms median (min-max)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("op table from"), std::string::npos) << "no profiled pass: " << r.output;
  // So no recommendation could be read, and it says so rather than "nothing found".
  EXPECT_NE(r.output.find("What to change: no reduced-precision variant had a profiled pass"), std::string::npos)
      << r.output;
  for (const char* variant : {"fp32", "fp16", "bf16"}) {
    const std::string row = row_of(r.output, variant);
    ASSERT_FALSE(row.empty()) << variant << " has no row in: " << r.output;
    EXPECT_NE(row.find("      2 "), std::string::npos) << "2 repeats: " << row;
  }
  EXPECT_NE(row_of(r.output, "fp32").find(" 1.00x "), std::string::npos) << "fp32 against itself: " << r.output;

  const Result summary = ampscope(fmt::format("summary '{}'", out));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("inference, batch of 32: "), std::string::npos) << summary.output;
  for (const char* variant : {"fp32", "fp16", "bf16"})
    EXPECT_EQ(row_of(summary.output, variant), row_of(r.output, variant)) << "summary shows what compare printed";
}

TEST(CliCompare, InferenceRefusesTrainingFlagsInOneLine) {
  ScratchDir dir;
  const std::string out = (dir / "c.ampscope").string();
  for (const std::string& flag : {std::string("--scaler"), std::string("--accumulate 2"),
                                  std::string("--clip-grad-norm 1"), std::string("--eval-every 2"),
                                  std::string("--profile-steps 2")}) {
    const Result r = ampscope(fmt::format("compare --inference --model mlp --device cpu --steps 4 --warmup 1 {} --out '{}'",
                                          flag, out));
    EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.output;
    const std::string name = flag.substr(0, flag.find(' '));
    EXPECT_EQ(r.output, "ampscope: error: " + name + " is a training flag; --inference times the forward pass only "
                        "(leave " + name + " out)\n");
    EXPECT_FALSE(std::filesystem::exists(out)) << flag;
  }
}

// Impossible comparison settings are rows of docs/bad-input.md (tests/cli/test_bad_input_table.cpp).

}  // namespace
