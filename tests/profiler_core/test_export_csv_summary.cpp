// CSV tables quote what needs quoting and have a row per record; the JSON summary
// holds the numbers a user would compute by hand from the crafted session.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#include <signal.h>
#include <sys/resource.h>

#include "profiler/export/csv_export.h"
#include "profiler/export/export_util.h"
#include "profiler/export/json_summary.h"
#include "tests/profiler_core/session_fixture.h"
#include "tests/support/test_support.h"

namespace ampscope::test {
namespace {

// A minimal RFC 4180 reader, to check the writer from the outside.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
      ++i;
    } else {
      field += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

class Exports : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_ / "run.ampscope";
    fixture_ = make_fixture();
    write_fixture_file(path_, fixture_);
  }
  ScratchDir dir_;
  std::string path_;
  Fixture fixture_;
};

TEST_F(Exports, OpTableCsvQuotesNamesWithCommasAndQuotes) {
  std::ostringstream out;
  export_op_table_csv(SessionReader::open(path_), out);
  const std::string text = out.str();
  EXPECT_NE(text.find(R"("my_op ""fused, fast""")"), std::string::npos) << text;
  const auto rows = parse_csv(text);
  ASSERT_EQ(rows.size(), 1 + fixture_.op_stats.size());
  for (const auto& r : rows) EXPECT_EQ(r.size(), rows[0].size());
  EXPECT_EQ(rows[0][0], "name");
  EXPECT_EQ(rows[2][0], R"(my_op "fused, fast")");
  EXPECT_EQ(rows[2][18], "fp32 inputs, \"no\" autocast");
  EXPECT_EQ(rows[1][4], R"(["float32","float32","float32"])");
  EXPECT_EQ(rows[1][5], "[[32,64],[64,64],[64]]");
  EXPECT_EQ(rows[1][7], "4");
  EXPECT_EQ(rows[0][19], "top_level");
  EXPECT_EQ(rows[1][19], "true");
  EXPECT_EQ(rows[4][0], "aten::_to_copy");
  EXPECT_EQ(rows[4][19], "false");  // the nested cast row
  EXPECT_EQ(rows[0][20], "compiled");  // no row of the fixture comes from torch.compile
  EXPECT_EQ(rows[1][20], "false");
}

TEST_F(Exports, KernelAndStepCsvHaveARowPerRecord) {
  const auto r = SessionReader::open(path_);
  std::ostringstream kernels, steps;
  export_kernels_csv(r, kernels);
  export_steps_csv(r, steps);
  const auto k = parse_csv(kernels.str());
  ASSERT_EQ(k.size(), 1 + fixture_.kernels.size());
  for (const auto& row : k) EXPECT_EQ(row.size(), k[0].size());
  EXPECT_EQ(k[3][1], kOddKernel);  // step 1: memcpy, gemm, then the elementwise kernel
  EXPECT_EQ(k[2][10], "4x2x1");
  EXPECT_EQ(k[2][15], "true");   // the GEMM: Tensor Core by name
  EXPECT_EQ(k[3][15], "false");  // the elementwise kernel
  const auto s = parse_csv(steps.str());
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[2][0], "2");
  EXPECT_EQ(s[2][1], "1");
  EXPECT_EQ(s[2][5], "true");  // skipped
  EXPECT_EQ(s[1][3], "65536");
  // Validation after steps 2 and 4 only: the other rows leave eval_loss empty.
  EXPECT_EQ(s[0].back(), "eval_loss");
  EXPECT_EQ(s[1].back(), "");
  EXPECT_EQ(s[2].back(), "1.25");
  EXPECT_EQ(s[3].back(), "");
  EXPECT_EQ(s[4].back(), "0.75");
}

TEST_F(Exports, GradientCsvHasARowPerSampledParameterWithEveryFormat) {
  std::ostringstream out;
  export_gradients_csv(SessionReader::open(path_), out);
  const auto rows = parse_csv(out.str());
  ASSERT_EQ(rows.size(), 1 + fixture_.gradients.size());
  for (const auto& row : rows) EXPECT_EQ(row.size(), rows[0].size());
  const auto column = [&](const std::string& name) {
    const auto it = std::find(rows[0].begin(), rows[0].end(), name);
    EXPECT_NE(it, rows[0].end()) << name;
    return static_cast<size_t>(it - rows[0].begin());
  };
  // Sorted by step, then parameter: step 2's fc1.bias first.
  EXPECT_EQ(rows[1][column("step")], "2");
  EXPECT_EQ(rows[1][column("parameter")], "fc1.bias");
  EXPECT_EQ(rows[1][column("fp16_underflow_fraction")], "0.5");
  EXPECT_EQ(rows[1][column("fp8_e4m3_underflow_fraction")], "0.5");
  EXPECT_EQ(rows[1][column("fp8_e5m2_overflow_fraction")], "0.03125");
  EXPECT_EQ(rows[1][column("bf16_subnormal_fraction")], "0.001");
}

TEST_F(Exports, PathExportsReplaceFilesWhole) {
  const auto r = SessionReader::open(path_);
  const std::string csv = dir_ / "steps.csv";
  write_file(csv, "old contents that are longer than nothing at all");
  export_steps_csv(r, csv);
  std::string text;
  ASSERT_EQ(run_command("cat '" + csv + "'", &text), 0);
  EXPECT_EQ(text.rfind("step,loss,", 0), 0u);
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path()))
    EXPECT_NE(entry.path().extension(), ".tmp") << "a temporary file was left: " << entry.path();
  try {
    export_steps_csv(r, (dir_ / "no-such-dir" / "x.csv").string());
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write"), std::string::npos);
  }
}

// Every write of an output is checked: a full device or a file-size limit is a StoreError
// naming the path and the OS error, never a silent success, and no temporary file stays.
void expect_write_fails(const std::string& path, const std::string& os_error, size_t bytes) {
  try {
    export_detail::write_file_atomically(path, [&](std::ostream& out) { out << std::string(bytes, 'x'); });
    FAIL() << "the write to " << path << " succeeded";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + path + "': " + os_error);
  }
}

TEST_F(Exports, AFullDeviceIsAFailedWrite) {
  expect_write_fails("/dev/full", "No space left on device", 10);
  expect_write_fails("/dev/full", "No space left on device", 1 << 20);  // past the stream's buffer
}

TEST_F(Exports, AFileSizeLimitIsAFailedWriteThatLeavesNothing) {
  // As main() does: the limit then fails the write with EFBIG instead of killing the process.
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  rlimit limited = old;
  limited.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  ScratchDir out;
  expect_write_fails((out / "big.csv").string(), "File too large", 10'000);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(std::filesystem::is_empty(out.path())) << "the output or its temporary file was left";
}

TEST_F(Exports, AFailedExportLeavesTheOldFileAndNoTemporaryFile) {
  ScratchDir out;
  write_file(out / "s.json", "old");
  EXPECT_THROW(export_detail::write_file_atomically((out / "s.json").string(),
                                                    [](std::ostream&) { throw StoreError("the export failed"); }),
               StoreError);
  std::string text;
  ASSERT_EQ(run_command("cat '" + (out / "s.json").string() + "'", &text), 0);
  EXPECT_EQ(text, "old");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(out.path()), {}), 1);
}

TEST_F(Exports, JsonSummaryOfACraftedSession) {
  std::ostringstream out;
  export_json_summary(load_session_view(path_), out, 2);
  const auto s = nlohmann::json::parse(out.str());

  EXPECT_EQ(s["format"], "ampscope-summary");
  EXPECT_EQ(s["meta"]["precision"], "fp16");
  EXPECT_EQ(s["meta"]["parameter_count"], 12345);
  EXPECT_EQ(s["meta"]["scaler_enabled"], true);

  const auto& totals = s["totals"];
  EXPECT_EQ(totals["steps"], 4);
  EXPECT_EQ(totals["ops"], 16);
  EXPECT_EQ(totals["kernels"], 12);
  // Top-level op table rows: linear and AddmmBackward0 (demoted), my_op (unchanged),
  // 1.2 ms GPU and 8 ms CPU each; the nested cast row is left out.
  EXPECT_EQ(totals["gpu_time_ns"], 3 * 1'200'000);
  EXPECT_EQ(totals["cpu_time_ns"], 3 * 8'000'000);
  EXPECT_EQ(totals["cast_cpu_time_ns"], 4 * 300'000);
  EXPECT_EQ(totals["cast_gpu_time_ns"], 4 * 50'000);
  EXPECT_EQ(totals["unattributed_gpu_ns"], 0);
  std::map<std::string, nlohmann::json> cats;
  for (const auto& c : totals["categories"]) cats[c["category"]] = c;
  ASSERT_EQ(cats.size(), 2u);
  EXPECT_EQ(cats.count("autocast_cast"), 0u);
  EXPECT_EQ(cats["demoted"]["calls"], 8);
  EXPECT_EQ(cats["demoted"]["gpu_time_ns"], 2 * 1'200'000);
  EXPECT_DOUBLE_EQ(cats["demoted"]["gpu_share"].get<double>(), 2.0 / 3.0);
  EXPECT_EQ(cats["demoted"]["cast_cpu_time_ns"], 4 * 300'000);
  EXPECT_EQ(cats["demoted"]["cast_gpu_time_ns"], 4 * 50'000);
  EXPECT_EQ(cats["unchanged"]["calls"], 4);
  EXPECT_EQ(cats["unchanged"]["cast_cpu_time_ns"], 0);
  double share = 0;
  for (const auto& [name, c] : cats) share += c["cpu_share"].get<double>();
  EXPECT_NEAR(share, 1.0, 1e-12);

  ASSERT_EQ(s["top_ops"].size(), 2u);
  EXPECT_EQ(s["top_ops"][0]["name"], "aten::linear");
  ASSERT_EQ(s["top_kernels"].size(), 2u);
  EXPECT_EQ(s["top_kernels"][0]["calls"], 4);
  EXPECT_EQ(s["top_kernels"][0]["tensor_core"], true);
  EXPECT_EQ(s["top_kernels"][0]["launching_ops"], nlohmann::json({"aten::addmm"}));
  EXPECT_EQ(s["top_kernels"][0]["grid"], nlohmann::json({4, 2, 1}));
  EXPECT_EQ(s["top_kernels"][0]["block"], nlohmann::json({128, 1, 1}));
  // Of all GPU time: the top-level rows' 3.6 ms plus none unattributed.
  EXPECT_DOUBLE_EQ(s["top_kernels"][0]["gpu_share"].get<double>(), 1'000'000 / 3'600'000.0);

  const auto& training = s["training"];
  EXPECT_EQ(training["first_loss"], 2.0);
  EXPECT_EQ(training["last_loss"], 0.5);
  EXPECT_EQ(training["skipped_steps"], 1);
  EXPECT_EQ(training["skipped"], nlohmann::json({2}));
  EXPECT_EQ(training["loss_scale"]["min"], 32768.0);
  EXPECT_EQ(training["loss_scale"]["max"], 65536.0);
  EXPECT_EQ(training["loss_scale"]["final"], 32768.0);
  EXPECT_EQ(training["last_eval_loss"], 0.75);
  EXPECT_EQ(training["eval"], nlohmann::json::parse(R"([{"step":2,"loss":1.25},{"step":4,"loss":0.75}])"));

  const auto& g = s["gradients"];
  EXPECT_EQ(g["step"], 4);
  EXPECT_EQ(g["parameters"], 2);
  EXPECT_EQ(g["numel"], 4160);
  // Weighted by elements: (4096 x 0.25 + 64 x 0.5) / 4160.
  EXPECT_DOUBLE_EQ(g["fp16_underflow_fraction"].get<double>(), (4096 * 0.25 + 64 * 0.5) / 4160);
  EXPECT_EQ(g["nearest_fp16_edge"][0]["parameter"], "fc1.bias");
  // Every format with its limits and shares (the fixture gives fp8 e4m3 0.5 / 0.25 / 0.0625).
  const auto& e4m3 = g["formats"]["fp8_e4m3"];
  EXPECT_EQ(e4m3["max"], 448.0);
  EXPECT_EQ(e4m3["has_inf"], false);
  EXPECT_DOUBLE_EQ(e4m3["underflow_fraction"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(e4m3["overflow_fraction"].get<double>(), 0.0625);
  EXPECT_DOUBLE_EQ(g["formats"]["fp16"]["underflow_fraction"].get<double>(),
                   g["fp16_underflow_fraction"].get<double>());
  EXPECT_EQ(g["formats"].size(), 4u);
}

// What a cast to fp16 loses outright (flushed, overflowed, or inf/NaN already) ranks before
// what only loses precision (subnormal); the JSON listed by underflow alone, so a parameter
// whose gradient overflowed, the one that made GradScaler skip, was not in it.
TEST_F(Exports, JsonListsTheParametersNearestFp16sEdgeFirst) {
  SessionView view = load_session_view(path_);
  ASSERT_FALSE(view.latest_gradients.empty());
  const GradientSample base = view.latest_gradients.front();
  auto sample = [&](const std::string& name, double underflow, double subnormal, double overflow, double nonfinite) {
    GradientSample g = base;
    g.parameter = name;
    g.fp16_underflow_fraction = underflow;
    g.fp16_subnormal_fraction = subnormal;
    g.fp16_overflow_fraction = overflow;
    g.nonfinite_fraction = nonfinite;
    return g;
  };
  view.latest_gradients = {sample("in_range", 0, 0, 0, 0),        sample("subnormal", 0, 0.4, 0, 0),
                           sample("flushed", 0.02, 0, 0, 0),     sample("overflowed", 0, 0, 0.05, 0),
                           sample("nonfinite", 0, 0, 0, 0.5),    sample("more_subnormal", 0, 0.6, 0, 0)};
  const auto list = session_summary(view)["gradients"]["nearest_fp16_edge"];
  std::vector<std::string> order;
  for (const auto& e : list) order.push_back(e["parameter"]);
  EXPECT_EQ(order, (std::vector<std::string>{"nonfinite", "overflowed", "flushed", "more_subnormal", "subnormal"}));
  EXPECT_EQ(list[1]["fp16_overflow_fraction"], 0.05);
  EXPECT_EQ(list[0]["nonfinite_fraction"], 0.5);
  EXPECT_EQ(list[3]["fp16_subnormal_fraction"], 0.6);
}

TEST_F(Exports, SummaryOfAnEmptySessionHasNulls) {
  const std::string empty = dir_ / "empty.ampscope";
  SessionWriter::create(empty, SessionMeta{})->close();
  const auto s = session_summary(load_session_view(empty));
  EXPECT_EQ(s["totals"]["kernels"], 0);
  EXPECT_TRUE(s["totals"]["categories"].empty());
  EXPECT_EQ(s["totals"]["gpu_time_ns"], 0);
  EXPECT_EQ(s["training"]["steps"], 0);
  EXPECT_TRUE(s["gradients"].is_null());
  EXPECT_TRUE(s["top_kernels"].empty());
}

}  // namespace
}  // namespace ampscope::test
