// `ampscope profile`, `export` and `summary` as a user runs them: the profiler
// issue's acceptance run, a killed run's session, and bad session files.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <regex>
#include <sstream>
#include <string_view>

#include "profiler/capture_settings.h"
#include "profiler/store/session_reader.h"
#include "tests/cli/cli_runner.h"
#include "tests/profiler_core/session_fixture.h"
#include "tests/support/tensorboard_reader.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::test::ScratchDir;

using Result = ampscope::test::CliResult;
using ampscope::test::ampscope;

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

class ProfiledGptSession : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    const Result r = ampscope(fmt::format(
        "profile --model gpt --precision bf16 --device cpu --steps 8 --layers 1 --width 64 --seq-len 16 --out '{}'",
        session().string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::filesystem::path session() { return *dir_ / "s.ampscope"; }
  static ScratchDir* dir_;
};
ScratchDir* ProfiledGptSession::dir_ = nullptr;

TEST_F(ProfiledGptSession, SummaryShowsTheAutocastCategories) {
  const Result r = ampscope(fmt::format("summary '{}'", session().string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* needle : {"demoted", "kept_fp32", "aten::linear", "aten::cross_entropy_loss", "fp32 \u2192 bf16",
                             "cast tax", "autocast_cast", "steps     8"})
    EXPECT_NE(r.output.find(needle), std::string::npos) << needle << "\n" << r.output;
  // Trained on the CPU, nothing was traced on a GPU: no column of zeros that reads as "no GPU time".
  EXPECT_EQ(r.output.find("GPU ms"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cast tax CPU ms; no GPU time traced"), std::string::npos) << r.output;
}

// The category and phase tables count the same top-level calls over the same profiled steps, so
// their calls and CPU times add up to the same totals (the phase table gave ms per step beside
// total calls).
TEST_F(ProfiledGptSession, SummaryCategoryAndPhaseTablesAddUpAlike) {
  const Result r = ampscope(fmt::format("summary '{}'", session().string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto sums = [&](const std::string& heading) {
    const size_t at = r.output.find(heading);
    EXPECT_NE(at, std::string::npos) << heading << "\n" << r.output;
    std::istringstream lines(r.output.substr(r.output.find('\n', at) + 1));
    std::pair<int64_t, double> calls_and_ms{0, 0.0};
    const std::regex row(R"(^  \S+ +(\d+) calls +([0-9.]+) )");
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, row)) break;
      calls_and_ms.first += std::stoll(m[1]);
      calls_and_ms.second += std::stod(m[2]);
    }
    return calls_and_ms;
  };
  // Steps 2-8: the built-in trainer's step 1, the warm-up, is left out of the op table, and said.
  const auto categories = sums("Time by what autocast did (top-level ops over 7 profiled steps");
  const auto phases = sums("Time by phase (top-level ops over 7 profiled steps");
  EXPECT_NE(r.output.find("\n  (step 1 left out as warm-up: its ops took "), std::string::npos) << r.output;
  EXPECT_GT(categories.first, 0);
  EXPECT_EQ(phases.first, categories.first);
  EXPECT_NEAR(phases.second, categories.second, 0.01);  // each row rounded to a microsecond
}

// A session traced through CUPTI has its GPU column, in the category table and the op tables.
TEST(SummaryOfAGpuSession, ShowsGpuTimePerCategoryAndOp) {
  ScratchDir dir;
  const auto path = dir / "gpu.ampscope";
  ampscope::test::write_fixture_file(path.string(), ampscope::test::make_fixture());
  const Result r = ampscope(fmt::format("summary '{}'", path.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("CPU ms, share, GPU ms, cast tax CPU ms)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("     CPU ms     GPU ms  input shapes"), std::string::npos) << r.output;
}

// Terminal columns of a UTF-8 line (the tables print one-column characters).
size_t columns(std::string_view utf8) {
  return static_cast<size_t>(std::count_if(utf8.begin(), utf8.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// Issue #31: the op tables print whole op names (a reader searches for what they
// see) and every row's numbers stand under their header, however long a name,
// module path or dtype list (the optimizer's hundreds of inputs) is.
TEST_F(ProfiledGptSession, SummaryOpTablesFitTheirContent) {
  const Result r = ampscope(fmt::format("summary '{}' --top 1000", session().string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream lines(r.output);
  std::string line;
  size_t tables = 0, rows = 0, widest_name_column = 0;
  // Rows alike up to the calls (op, module, phase, dtypes), with the input shapes of each.
  std::map<std::string, std::vector<std::string>> shapes_of_alike_rows;
  // The byte where a UTF-8 line's column `column` starts.
  const auto byte_at = [](const std::string& utf8, size_t column) {
    size_t cols = 0, i = 0;
    for (; i < utf8.size(); ++i) {
      if ((utf8[i] & 0xC0) != 0x80 && cols++ == column) break;
    }
    return i;
  };
  while (std::getline(lines, line)) {
    if (!line.starts_with("  op ")) continue;
    ++tables;
    const size_t header_calls_end = columns(line.substr(0, line.find("calls") + 5));
    const size_t header_calls = columns(line.substr(0, line.find("calls")));
    const size_t header_shapes = columns(line.substr(0, line.find("input shapes")));
    ASSERT_NE(line.find("input shapes"), std::string::npos) << line;
    const size_t header_module = line.find("module");
    widest_name_column = std::max(widest_name_column, header_module - 3);  // "  " before, " " after
    while (std::getline(lines, line) && !line.empty()) {
      ++rows;
      // The module column starts under its header: the name was not cut and did not push it.
      EXPECT_EQ(line[header_module - 1], ' ') << line;
      EXPECT_NE(line[header_module], ' ') << "module column misplaced:\n" << line;
      // The calls count ends under "calls".
      std::string head;  // the row's first header_calls_end columns
      size_t cols = 0, i = 0;
      for (; i < line.size() && cols < header_calls_end; ++i)
        if ((line[i] & 0xC0) != 0x80) ++cols;
      while (i < line.size() && (line[i] & 0xC0) == 0x80) ++i;
      head = line.substr(0, i);
      ASSERT_FALSE(head.empty());
      EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(head.back()))) << "calls not under its header:\n" << line;
      EXPECT_TRUE(i == line.size() || line[i] == ' ') << line;
      std::string shapes = line.substr(std::min(line.size(), byte_at(line, header_shapes)));
      shapes = shapes.substr(0, shapes.find("  ["));  // a Tensor Core note follows
      const std::string alike = line.substr(0, byte_at(line, header_calls - 2));
      shapes_of_alike_rows[alike].push_back(shapes);
    }
  }
  // The input shapes tell apart rows that read alike otherwise: a Linear's two backward
  // matrix multiplies (grad input and grad weight) are two rows of one op, module and phase.
  // (Rows of 0-dim tensors only, such as the optimizer's aten::to overloads, show no shapes.)
  size_t alike_groups = 0;
  for (const auto& [alike, shapes] : shapes_of_alike_rows) {
    if (shapes.size() < 2 || std::ranges::any_of(shapes, [](const std::string& s) { return s.empty(); })) continue;
    ++alike_groups;
    EXPECT_EQ(std::set<std::string>(shapes.begin(), shapes.end()).size(), shapes.size()) << alike;
  }
  EXPECT_GT(alike_groups, 0u) << r.output;
  EXPECT_GE(tables, 3u) << r.output;  // demoted, kept_fp32, unchanged at least
  EXPECT_GE(rows, 10u) << r.output;
  // The GPT's names longer than the old 28-character column are shown whole.
  EXPECT_GT(widest_name_column, 28u) << r.output;
  // The optimizer's dtypes (a tensor list per parameter group) stay one short word each side.
  for (std::istringstream all(r.output); std::getline(all, line);)
    if (line.find("adam") != std::string::npos) {
      EXPECT_EQ(line.find("fp32,fp32"), std::string::npos) << line;
    }
}

TEST_F(ProfiledGptSession, ChromeTraceIsValidWithOpsAndSteps) {
  const auto trace = *dir_ / "t.json";
  const Result r = ampscope(fmt::format("export '{}' --format chrome -o '{}'", session().string(), trace.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto json = nlohmann::json::parse(read(trace));
  ASSERT_TRUE(json.contains("traceEvents"));
  int cpu_ops = 0, bf16_outputs = 0;
  double last_ts = -1;
  for (const auto& e : json["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    if (e.value("cat", "") == "cpu_op") {
      ++cpu_ops;
      EXPECT_TRUE(e["args"].contains("External id"));
      if (e["name"] == "aten::linear" && e["args"].contains("Output type") &&
          e["args"]["Output type"].dump().find("BFloat16") != std::string::npos)
        ++bf16_outputs;
    }
    last_ts = std::max(last_ts, e["ts"].get<double>());
  }
  EXPECT_GT(cpu_ops, 100);
  EXPECT_GT(bf16_outputs, 0);
}

// --tensorboard logs while the run goes; the export of its session afterwards
// writes the same steps, values and gradient histograms.
TEST(ProfileTensorBoard, LiveLogAndExportAgreeWithTheSession) {
#ifndef AMPSCOPE_HAVE_TENSORBOARD
  GTEST_SKIP() << "this build has no protobuf: no TensorBoard output";
#endif
  ScratchDir dir;
  const auto session = dir / "s.ampscope";
  Result r = ampscope(fmt::format(
      "profile --model mlp --precision fp16 --device cpu --steps 9 --grad-every 4 --sample-budget 0 --out '{}' --tensorboard '{}' -q",
      session.string(), (dir / "live").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = ampscope(fmt::format("export '{}' --format tensorboard -o '{}'", session.string(), (dir / "exported").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("tfevents"), std::string::npos) << r.output;
  const auto live = ampscope::test::read_with_tensorboard(dir / "live");
  if (!live) GTEST_SKIP() << "no Python configured (AMPSCOPE_PYTHON)";
  const auto exported = ampscope::test::read_with_tensorboard(dir / "exported");
  ASSERT_TRUE(exported);
  const auto& loss = (*live)["scalars"]["train/loss"];
  ASSERT_EQ(loss.size(), 9u) << live->dump();
  for (size_t i = 0; i < 9; ++i) EXPECT_EQ(loss[i][0], i + 1);
  EXPECT_EQ((*exported)["scalars"]["train/loss"], loss);
  EXPECT_EQ((*exported)["scalars"]["amp/loss_scale"], (*live)["scalars"]["amp/loss_scale"]);
  // A CPU run's memory is the process's resident set, tagged so live and exported alike.
  EXPECT_FALSE((*live)["scalars"].contains("memory/allocated_bytes")) << live->dump();
  ASSERT_EQ((*live)["scalars"]["memory/resident_set_bytes"].size(), 9u) << live->dump();
  EXPECT_EQ((*exported)["scalars"]["memory/resident_set_bytes"], (*live)["scalars"]["memory/resident_set_bytes"]);
  EXPECT_EQ((*exported)["scalars"]["memory/peak_resident_set_bytes"],
            (*live)["scalars"]["memory/peak_resident_set_bytes"]);
  // Gradient samples at steps 4 and 8, one histogram per parameter, same counts live and exported.
  const auto& histograms = (*live)["histograms"];
  ASSERT_FALSE(histograms.empty()) << live->dump();
  for (const auto& [tag, events] : histograms.items()) {
    ASSERT_EQ(events.size(), 2u) << tag;
    EXPECT_EQ(events[0][0], 4);
    EXPECT_EQ(events[1][0], 8);
    EXPECT_EQ((*exported)["histograms"][tag], events) << tag;
  }
  EXPECT_EQ((*exported)["histograms"].size(), histograms.size());
}

TEST_F(ProfiledGptSession, CsvAndJsonExports) {
  const auto prefix = *dir_ / "x";
  Result r = ampscope(fmt::format("export '{}' --format csv -o '{}'", session().string(), prefix.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(read(prefix.string() + ".ops.csv").find("aten::linear"), std::string::npos);
  EXPECT_FALSE(read(prefix.string() + ".steps.csv").empty());
  // "-o run.csv" names the prefix "run", and a directory takes the tables named after the session.
  r = ampscope(fmt::format("export '{}' --format csv -o '{}'", session().string(), (*dir_ / "run.csv").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(*dir_ / "run.ops.csv")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "run.csv.ops.csv"));
  const auto tables = *dir_ / "tables";
  std::filesystem::create_directory(tables);
  r = ampscope(fmt::format("export '{}' --format csv -o '{}'", session().string(), tables.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(tables / (session().stem().string() + ".gradients.csv"))) << r.output;
  const auto summary = *dir_ / "summary.json";
  r = ampscope(fmt::format("export '{}' --format json -o '{}'", session().string(), summary.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(nlohmann::json::parse(read(summary), nullptr, /*allow_exceptions=*/false).is_object());
}

// The steps a session (live or finished) holds, as `summary` prints them; -1 if unreadable.
// A killed run's session, bad session files and an existing --out are rows of docs/bad-input.md
// (tests/cli/test_bad_input_table.cpp).

// A full disk must not be silent. RLIMIT_FSIZE stands in for it without root:
// writes past 256 KiB fail (EFBIG) and, with SIGXFSZ ignored, do not kill the program.
TEST(CliProfile, AFullDiskIsAnErrorNotASilentLoss) {
  ScratchDir dir;
  const auto path = dir / "full.ampscope";
  const std::string script = fmt::format(
      "trap '' XFSZ; ulimit -f 512 && exec '{}' profile --model mlp --device cpu --steps 400 --quiet --out '{}'",
      AMPSCOPE_CLI, path.string());
  ampscope::test::write_file(dir / "full.sh", script);
  std::string output;
  const int code = ampscope::test::run_command(fmt::format("sh '{}' 2>&1", (dir / "full.sh").string()), &output);
  EXPECT_EQ(code, 1) << output;
  EXPECT_NE(output.find("ampscope: error: the session writer failed ("), std::string::npos) << output;
  EXPECT_NE(output.find("did not store"), std::string::npos) << output;
  EXPECT_EQ(output.find("terminate called"), std::string::npos) << output;
  // What reached the disk still opens, and says what it lost when it could record that.
  const Result summary = ampscope(fmt::format("summary '{}'", path.string()));
  EXPECT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("lost "), std::string::npos) << summary.output;
}

// Dropped records are said by summary, from the counts the session keeps in its meta.
// Each capture flag reaches the profiler: the session says it was recorded with it, and
// without flags with the defaults every entry point shares (capture_option_specs.h).
TEST(CliProfile, EveryCaptureFlagIsWhatTheSessionWasRecordedWith) {
  using ampscope::profiler::CaptureSettings;
  ScratchDir dir;
  const auto recorded = [](const std::filesystem::path& path) {
    CaptureSettings settings;
    EXPECT_TRUE(settings.read_meta(ampscope::profiler::SessionReader::open(path.string()).meta_values()));
    return settings;
  };
  const auto asked = dir / "asked.ampscope";
  Result r = ampscope(fmt::format("profile --model mlp --device cpu --steps 4 --quiet "
                                  "--window-start 2 --window-steps 2 --every 2 --grad-every 3 --sample-budget 0 "
                                  "--readiness-every 0 --no-gpu-trace --out '{}'",
                                  asked.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(recorded(asked), (CaptureSettings{.window_start = 2, .window_steps = 2, .every_n_steps = 2,
                                              .gradient_every = 3, .sample_budget_percent = 0,
                                              .readiness_every = 0, .trace_gpu = false}));
  const auto defaults = dir / "defaults.ampscope";
  r = ampscope(fmt::format("profile --model mlp --device cpu --steps 2 --quiet --out '{}'", defaults.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(recorded(defaults), CaptureSettings{});
  r = ampscope(fmt::format("profile --model mlp --device cpu --steps 2 --quiet --every 0 --force --out '{}'",
                           defaults.string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--every must be >= 1"), std::string::npos) << r.output;
}

// A small MLP profiled for two steps with one gradient sample at the last: `flags` give
// its precision and scale. Returns the session's path.
std::filesystem::path profile_sampled_mlp(const ScratchDir& dir, const std::string& name, const std::string& flags) {
  const auto path = dir / (name + ".ampscope");
  const Result r = ampscope(fmt::format("profile --model mlp --width 32 {} --device cpu --steps 2 --grad-every 2 "
                                        "--sample-budget 0 --quiet --out '{}'",
                                        flags, path.string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return path;
}

// summary, the JSON summary and the report name the same parameters nearest fp16's edge,
// in the same order (one ranking, records.h): the JSON ranked by underflow alone and
// summary named none. At a loss scale of 1e-4 most of the MLP's fp16 gradients are left
// subnormal, in shares that differ by parameter.
TEST(CliProfile, SummaryJsonAndReportNameTheSameParametersNearestFp16sEdge) {
  ScratchDir dir;
  const auto path = profile_sampled_mlp(dir, "small_scale", "--layers 3 --precision fp16 --init-scale 1e-4");
  const Result summary = ampscope(fmt::format("summary '{}'", path.string()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  ASSERT_EQ(ampscope(fmt::format("export '{}' --format json -o '{}'", path.string(), (dir / "s.json").string()))
                .exit_code,
            0);
  const auto nearest = nlohmann::json::parse(read(dir / "s.json"))["gradients"]["nearest_fp16_edge"];
  ASSERT_EQ(nearest.size(), 5u) << nearest;
  const auto lost = [](const nlohmann::json& e) {
    return e["fp16_underflow_fraction"].get<double>() + e["fp16_overflow_fraction"].get<double>() +
           e["nonfinite_fraction"].get<double>();
  };
  EXPECT_GT(lost(nearest[0]) + nearest[0]["fp16_subnormal_fraction"].get<double>(), 0.0) << nearest;
  for (size_t i = 1; i < nearest.size(); ++i)
    EXPECT_TRUE(lost(nearest[i - 1]) > lost(nearest[i]) ||
                (lost(nearest[i - 1]) == lost(nearest[i]) &&
                 nearest[i - 1]["fp16_subnormal_fraction"] >= nearest[i]["fp16_subnormal_fraction"]))
        << nearest;
  ASSERT_EQ(ampscope(fmt::format("report '{}' -o '{}'", path.string(), (dir / "r.html").string())).exit_code, 0);
  const std::string html = read(dir / "r.html");
  const size_t table = html.find("Parameters nearest fp16's edge");
  const size_t list = summary.output.find("parameters, nearest fp16's edge first");
  ASSERT_NE(table, std::string::npos);
  ASSERT_NE(list, std::string::npos) << summary.output;
  size_t in_summary = list, in_html = table;
  for (const auto& e : nearest) {
    const std::string name = e["parameter"];
    const size_t next_summary = summary.output.find("\n    " + name + " ", in_summary);
    const size_t next_html = html.find("<code>" + name + "</code>", in_html);
    ASSERT_NE(next_summary, std::string::npos) << name << "\n" << summary.output;
    ASSERT_NE(next_html, std::string::npos) << name;
    EXPECT_GT(next_summary, in_summary) << name << "\n" << summary.output;
    EXPECT_GT(next_html, in_html) << name;
    in_summary = next_summary;
    in_html = next_html;
  }
}

// A bf16 run's gradients against fp16: summary, the JSON summary and the report give the
// loss scales that would carry them, in the same words; an fp16 run's JSON has none (its
// backward already flushed the small gradients, so the low end would read low).
TEST(CliProfile, ABf16RunSaysWhichFp16LossScalesWouldCarryItsGradients) {
  ScratchDir dir;
  for (const char* precision : {"bf16", "fp16"}) {
    const auto path = profile_sampled_mlp(dir, precision, fmt::format("--layers 2 --precision {}", precision));
    const auto json = dir / (std::string(precision) + ".json");
    ASSERT_EQ(ampscope(fmt::format("export '{}' --format json -o '{}'", path.string(), json.string())).exit_code, 0);
    const auto window = nlohmann::json::parse(read(json))["gradients"]["fp16_loss_scale_window"];
    const Result summary = ampscope(fmt::format("summary '{}'", path.string()));
    ASSERT_EQ(summary.exit_code, 0) << summary.output;
    if (std::string(precision) == "fp16") {
      EXPECT_TRUE(window.is_null()) << window;
      EXPECT_EQ(summary.output.find("loss scales from"), std::string::npos) << summary.output;
      continue;
    }
    ASSERT_TRUE(window.is_object()) << window;
    EXPECT_TRUE(window["fits"].get<bool>()) << window;  // an MLP's gradients span far less than fp16's range
    EXPECT_EQ(window["flushed_at_highest"], 0.0);         // nothing lost where a scale fits
    EXPECT_LE(window["lowest_log2"].get<int>(), window["highest_log2"].get<int>());
    const std::string text = window["text"];
    EXPECT_TRUE(text.starts_with("these gradients fit fp16 at loss scales from 2^")) << text;
    EXPECT_NE(summary.output.find("\n  " + text + "\n"), std::string::npos) << summary.output;
    ASSERT_EQ(ampscope(fmt::format("report '{}' -o '{}'", path.string(), (dir / "r.html").string())).exit_code, 0);
    // The report's paragraph and verdict: the same sentence, capitalized (its powers of two as superscripts).
    const std::string html = read(dir / "r.html");
    size_t at = 0, found = 0;
    const std::string sentence = "These gradients fit fp16 at loss scales from 2<sup>";
    while ((at = html.find(sentence, at)) != std::string::npos) ++found, ++at;
    EXPECT_EQ(found, 2u);
  }
}

// At a loss scale of 1e-6 fp16's backward flushes every gradient to zero before the
// unscale. The range shares are of what a cast could still lose, all 0 %: summary and the
// report read as if nothing was wrong while nothing trained.
TEST(CliProfile, GradientsFlushedInTheBackwardAreSaidToBeZero) {
  ScratchDir dir;
  const auto path = profile_sampled_mlp(dir, "tiny_scale", "--layers 3 --precision fp16 --init-scale 1e-6");
  const Result summary = ampscope(fmt::format("summary '{}'", path.string()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find(
                "before any cast: 100.000% exactly zero, 0.000% inf/NaN: the step had nothing to apply"),
            std::string::npos)
      << summary.output;
  EXPECT_EQ(summary.output.find("nearest fp16's edge"), std::string::npos) << summary.output;
  ASSERT_EQ(ampscope(fmt::format("report '{}' -o '{}'", path.string(), (dir / "r.html").string())).exit_code, 0);
  EXPECT_NE(read(dir / "r.html").find("but every gradient element was exactly zero: the step had nothing to apply"),
            std::string::npos);
}

TEST(CliProfile, DroppedRecordsAreShownBySummary) {
  ScratchDir dir;
  const auto path = dir / "ok.ampscope";
  Result r = ampscope(fmt::format("profile --model mlp --device cpu --steps 3 --quiet --out '{}'", path.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("could not keep up"), std::string::npos) << r.output;  // nothing lost, nothing said
  r = ampscope(fmt::format("summary '{}'", path.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("lost "), std::string::npos) << r.output;
  // The same session as if the profiler had dropped 7 batches and the writer 2.
  const int edited = ampscope::test::run_command(fmt::format(
      "python3 -c \"import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); "
      "c.executemany('INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)', "
      "[('profiler_dropped_batches', '7'), ('store_dropped_batches', '2')]); c.commit()\" '{}'",
      path.string()));
  ASSERT_EQ(edited, 0);
  r = ampscope(fmt::format("summary '{}'", path.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("the profiler could not keep up and dropped 7 batches of records"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("did not store 2 batches of records"), std::string::npos) << r.output;
}

}  // namespace
