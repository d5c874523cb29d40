// Precision readiness as `ampscope profile` users see it (issue #30): after a
// profiled run, summary prints the readiness table of the model's layers with the
// tensors measured and the thresholds, the JSON export and the HTML report carry
// it; a session recorded before readiness existed still opens everywhere, without it.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <string>

#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::test::ampscope;
using ampscope::test::ScratchDir;

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

class ProfiledMlp : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto r = ampscope(fmt::format(
        "profile --model mlp --layers 2 --width 32 --device cpu --steps 4 --grad-every 2 --sample-budget 0 "
        "--readiness-every 1 --out '{}'",
        session()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  std::string session() const { return (dir_ / "s.ampscope").string(); }
  ScratchDir dir_;
};

TEST_F(ProfiledMlp, SummaryJsonAndReportShowReadinessPerLayer) {
  const auto summary = ampscope(fmt::format("summary '{}'", session()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  const std::string& out = summary.output;
  const size_t table = out.find("Precision readiness per layer (2 sampled steps");
  ASSERT_NE(table, std::string::npos) << out;
  EXPECT_NE(out.find("range samples every 2 steps; precision readiness on every sample"), std::string::npos) << out;
  // The gradient table's fp8 rows (a plain cast at scale 1 flushes this MLP's small
  // gradients) say what they are beside a table that calls the layers ready for fp8.
  EXPECT_LT(out.find("fp8 rows: a plain cast of g * loss scale; fp8 recipes scale each tensor into fp8's range "
                     "first (precision readiness below)"),
            table)
      << out;
  for (const char* row : {"\n  layer ", "\n  hidden.0 ", "\n  hidden.1 ", "\n  head "})
    EXPECT_NE(out.find(row, table), std::string::npos) << row << "\n" << out;
  EXPECT_NE(out.find("measured: weights, layer inputs and weight gradients", table), std::string::npos);
  for (const char* element : {"    e4m3 (fp8 e4m3, MXFP8): ready at", "    e5m2 (fp8 e5m2): ready at",
                              "    e2m1 (NVFP4): ready at"})
    EXPECT_NE(out.find(element, table), std::string::npos) << element;

  const auto json_path = dir_ / "s.json";
  ASSERT_EQ(ampscope(fmt::format("export '{}' --format json -o '{}'", session(), json_path.string())).exit_code, 0);
  const auto readiness = nlohmann::json::parse(read(json_path))["readiness"];
  ASSERT_TRUE(readiness.is_object());
  ASSERT_EQ(readiness["layers"].size(), 3u);
  EXPECT_EQ(readiness["layers"][0]["layer"], "hidden.0");
  for (const char* target : {"FP8", "MXFP8", "NVFP4"})
    EXPECT_TRUE(readiness["layers"][0]["targets"][target].contains("verdict")) << target;
  EXPECT_EQ(readiness["thresholds"]["e2m1"]["ready"]["sqnr_db"], 17.0);

  const auto html_path = dir_ / "s.html";
  ASSERT_EQ(ampscope(fmt::format("report '{}' -o '{}'", session(), html_path.string())).exit_code, 0);
  const std::string html = read(html_path);
  EXPECT_NE(html.find("<h2>Precision readiness</h2>"), std::string::npos);
  EXPECT_NE(html.find("<code>hidden.1</code>"), std::string::npos);
}

TEST_F(ProfiledMlp, ASessionFromBeforeReadinessOpensWithoutIt) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(session().c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE readiness", nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
  const auto summary = ampscope(fmt::format("summary '{}'", session()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_EQ(summary.output.find("Precision readiness"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("Gradients at step 4"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("fp8 recipes scale each tensor into fp8's range first (precision readiness: "
                                "--readiness-every)"),
            std::string::npos)
      << summary.output;
  const auto json_path = dir_ / "s.json";
  ASSERT_EQ(ampscope(fmt::format("export '{}' --format json -o '{}'", session(), json_path.string())).exit_code, 0);
  EXPECT_TRUE(nlohmann::json::parse(read(json_path))["readiness"].is_null());
  const auto html_path = dir_ / "s.html";
  ASSERT_EQ(ampscope(fmt::format("report '{}' -o '{}'", session(), html_path.string())).exit_code, 0);
  EXPECT_EQ(read(html_path).find("Precision readiness"), std::string::npos);
}

}  // namespace
