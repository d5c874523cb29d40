// The Chrome trace opens in trace viewers and looks like a torch.profiler trace.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "profiler/process_identity.h"
#include "profiler/export/chrome_trace.h"
#include "tests/profiler_core/session_fixture.h"
#include "tests/support/test_support.h"

namespace ampscope::test {
namespace {

using nlohmann::json;

json trace_of(const SessionReader& r, const ChromeTraceOptions& options = {}) {
  std::ostringstream out;
  export_chrome_trace(r, out, options);
  return json::parse(out.str());  // throws (fails the test) on invalid JSON
}

class ChromeTrace : public ::testing::Test {
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

TEST_F(ChromeTrace, TopLevelLayoutIsKineto) {
  const json t = trace_of(SessionReader::open(path_));
  EXPECT_EQ(t["schemaVersion"], 1);
  EXPECT_EQ(t["displayTimeUnit"], "ms");
  EXPECT_EQ(t["traceName"], path_);
  ASSERT_EQ(t["deviceProperties"].size(), 1u);
  EXPECT_EQ(t["deviceProperties"][0]["id"], 0);
  EXPECT_EQ(t["deviceProperties"][0]["name"], "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(t["traceEvents"].is_array());
}

TEST_F(ChromeTrace, OpsCarryPyTorchArgsAndDtypeSpellings) {
  const json t = trace_of(SessionReader::open(path_));
  std::map<uint64_t, json> ops;
  for (const auto& e : t["traceEvents"])
    if (e.value("cat", "") == "cpu_op") ops[e["args"]["External id"]] = e;
  ASSERT_EQ(ops.size(), fixture_.ops.size());

  const json& linear = ops.at(fixture_.ops[0].id);
  EXPECT_EQ(linear["name"], "aten::linear");
  EXPECT_EQ(linear["ph"], "X");
  EXPECT_EQ(linear["pid"], current_process_id()) << "the process that wrote the session";
  EXPECT_EQ(linear["tid"], 1);
  EXPECT_DOUBLE_EQ(linear["ts"].get<double>(), (kT0 + 1'000'000) / 1000.0);
  EXPECT_DOUBLE_EQ(linear["dur"].get<double>(), 2000.0);
  const json& a = linear["args"];
  EXPECT_EQ(a["Input type"], json({"float", "float", "float"}));
  EXPECT_EQ(a["Input Dims"], json::parse("[[32,64],[64,64],[64]]"));
  EXPECT_EQ(a["Output type"], json({"c10::Half"}));
  EXPECT_EQ(a["Sequence number"], 10);
  EXPECT_EQ(a["Fwd thread id"], 0);
  EXPECT_EQ(a["Module"], "fc1");
  EXPECT_EQ(a["Autocast"], "demoted");
  EXPECT_EQ(a["Phase"], "forward");

  const json& addmm = ops.at(fixture_.ops[2].id);
  EXPECT_EQ(addmm["args"]["Input type"], json({"c10::Half", "c10::Half", "c10::Half", "", ""}));
  const json& cast = ops.at(fixture_.ops[1].id);
  EXPECT_FALSE(cast["args"].contains("Sequence number"));  // -1: none, as PyTorch omits it
  EXPECT_EQ(cast["args"]["Cast bytes"], 8192);
  EXPECT_EQ(cast["args"]["Input Dims"], json::parse("[[64,64],[]]"));
  const json& backward = ops.at(fixture_.ops[3].id);
  EXPECT_EQ(backward["tid"], 2);
  EXPECT_EQ(backward["args"]["Fwd thread id"], 1);  // the thread of its forward op
  EXPECT_EQ(backward["args"]["Phase"], "backward");

  EXPECT_EQ(pytorch_dtype_name("bfloat16"), "c10::BFloat16");
  EXPECT_EQ(pytorch_dtype_name("int64"), "long int");
  EXPECT_EQ(pytorch_dtype_name("c10::Half"), "c10::Half");
}

TEST_F(ChromeTrace, EveryKernelHasAFlowFromItsOp) {
  const json t = trace_of(SessionReader::open(path_));
  std::map<uint64_t, json> ops, starts, finishes;
  std::vector<json> gpu;
  for (const auto& e : t["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    if (cat == "cpu_op") ops[e["args"]["External id"]] = e;
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") gpu.push_back(e);
    if (cat == "ac2g" && e["ph"] == "s") {
      EXPECT_TRUE(starts.emplace(e["id"], e).second);
    }
    if (cat == "ac2g" && e["ph"] == "f") {
      EXPECT_TRUE(finishes.emplace(e["id"], e).second);
    }
  }
  ASSERT_EQ(gpu.size(), fixture_.kernels.size());
  int memcpys = 0;
  for (const auto& k : gpu) {
    SCOPED_TRACE(k.dump());
    memcpys += k["cat"] == "gpu_memcpy";
    const uint64_t corr = k["args"]["correlation"];
    ASSERT_TRUE(finishes.count(corr));
    ASSERT_TRUE(starts.count(corr));
    const json& f = finishes[corr];
    EXPECT_EQ(f["bp"], "e");
    EXPECT_EQ(f["pid"], k["pid"]);
    EXPECT_EQ(f["tid"], k["tid"]);
    EXPECT_EQ(f["ts"], k["ts"]);
    const json& op = ops.at(k["args"]["External id"].get<uint64_t>());
    const json& s = starts[corr];
    EXPECT_EQ(s["pid"], op["pid"]);
    EXPECT_EQ(s["tid"], op["tid"]);
    EXPECT_EQ(s["ts"], op["ts"]);
    EXPECT_EQ(k["pid"], 0);  // device
    EXPECT_EQ(k["tid"], 7);  // stream
  }
  EXPECT_EQ(memcpys, 4);
  const json gemm =
      *std::find_if(gpu.begin(), gpu.end(), [](auto& k) { return k["cat"] == "kernel"; });
  EXPECT_EQ(gemm["args"]["grid"], json({4, 2, 1}));
  EXPECT_EQ(gemm["args"]["registers per thread"], 168);
  EXPECT_EQ(gemm["args"]["Tensor Cores"], true);
}

TEST_F(ChromeTrace, EventsAreSortedWithNonNegativeDurationsAndSteps) {
  const json t = trace_of(SessionReader::open(path_));
  double last = -1;
  bool in_metadata = true;
  std::map<std::string, json> steps;
  int fwdbwd = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "M") {
      EXPECT_TRUE(in_metadata) << "metadata events come first";
      continue;
    }
    in_metadata = false;
    const double ts = e["ts"];
    EXPECT_GE(ts, last) << e.dump();
    last = ts;
    if (e["ph"] == "X") {
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
    if (e.value("cat", "") == "user_annotation") steps[e["name"]] = e;
    fwdbwd += e.value("cat", "") == "fwdbwd";
  }
  EXPECT_EQ(fwdbwd, 8);  // 4 backward ops, each an s/f pair
  ASSERT_EQ(steps.size(), 4u);
  // Each ProfilerStep encloses its step's ops on its track.
  for (const auto& op : fixture_.ops) {
    if (op.thread_id != 1) continue;
    const json& s = steps.at("ProfilerStep#" + std::to_string(op.step));
    EXPECT_EQ(s["tid"], 1);
    EXPECT_LE(s["ts"].get<double>(), op.start_ns / 1000.0);
    EXPECT_GE(s["ts"].get<double>() + s["dur"].get<double>(), op.end_ns / 1000.0);
  }
}

TEST_F(ChromeTrace, StepRangeLimitsTheTrace) {
  ChromeTraceOptions options;
  options.first_step = options.last_step = 3;
  const json t = trace_of(SessionReader::open(path_), options);
  int ops = 0, kernels = 0, steps = 0;
  for (const auto& e : t["traceEvents"]) {
    ops += e.value("cat", "") == "cpu_op";
    kernels += e.value("cat", "") == "kernel";
    steps += e.value("cat", "") == "user_annotation";
  }
  EXPECT_EQ(ops, 4);
  EXPECT_EQ(kernels, 2);
  EXPECT_EQ(steps, 1);
}

// Holistic Trace Analysis reads the trace as it reads PyTorch's: rank 0 from
// distributedInfo, one iteration per ProfilerStep#N span, i.e. every step.
TEST_F(ChromeTrace, HolisticTraceAnalysisFindsEveryStep) {
  const auto python = python_with_torch();
  if (!python) GTEST_SKIP() << "no Python configured (AMPSCOPE_PYTHON)";
  // A peer, like torchvision and transformers (python_peers_installed): CI installs it
  // (scripts/deps.env); a machine without it (the GPU machine's image) skips, saying so.
  if (run_command("'" + *python + "' -c 'import hta' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "HolisticTraceAnalysis is not installed in " << *python;
  const json t = trace_of(SessionReader::open(path_));
  EXPECT_EQ(t["distributedInfo"]["rank"], 0);
  EXPECT_EQ(t["distributedInfo"]["world_size"], 1);
  const auto traces = dir_ / "traces";
  std::filesystem::create_directories(traces);
  export_chrome_trace(SessionReader::open(path_), (traces / "rank-0.json").string());
  std::string out;
  const std::string cmd = "'" + *python + "' '" + test_source_path("python/hta_iterations.py").string() + "' '" +
                          traces.string() + "' 2>&1";
  ASSERT_EQ(run_command(cmd, &out), 0) << cmd << "\n" << out << "\n(is HolisticTraceAnalysis installed? scripts/deps.env)";
  // The last line: "count n1 n2 ...".
  const auto last = out.substr(out.find_last_of('\n', out.size() - 2) + 1);
  std::string expected = std::to_string(fixture_.steps.size());
  for (const auto& s : fixture_.steps) expected += " " + std::to_string(s.step);
  EXPECT_EQ(last, expected + "\n") << out;
}

TEST_F(ChromeTrace, PythonReadsItAndTorchUsesTheSameNames) {
  const auto python = python_with_torch();
  if (!python) GTEST_SKIP() << "no Python with torch configured (AMPSCOPE_PYTHON)";
  const std::string trace = dir_ / "trace.json";
  export_chrome_trace(SessionReader::open(path_), trace);
  const std::string script = dir_ / "check.py";
  write_file(script, R"py(
import json, sys, os, torch
ours = json.load(open(sys.argv[1]))
ops = [e for e in ours["traceEvents"] if e.get("cat") == "cpu_op"]
assert ops, "no cpu_op events"
# torch.profiler's own trace, with the dtypes autocast produces.
from torch.profiler import profile, ProfilerActivity
x = torch.randn(4, 8)
with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as p:
    torch.nn.functional.linear(x, torch.randn(3, 8))
    x.half() + 1
    x.bfloat16() * 2
    torch.arange(3) + 1
out = os.path.join(os.path.dirname(sys.argv[1]), "torch_trace.json")
p.export_chrome_trace(out)
ref = json.load(open(out))
for key in ("schemaVersion", "deviceProperties", "traceEvents", "traceName", "displayTimeUnit"):
    assert key in ref and key in ours, key
ref_ops = [e for e in ref["traceEvents"] if e.get("cat") == "cpu_op"]
ref_keys = set().union(*(e["args"].keys() for e in ref_ops))
for key in ("External id", "Record function id", "Input Dims", "Input type", "Sequence number"):
    assert key in ref_keys, "torch no longer writes " + key
    assert any(key in e["args"] for e in ops), "we do not write " + key
ref_types = set(t for e in ref_ops for t in e["args"].get("Input type", []))
for spelling in sys.argv[2:]:
    assert spelling in ref_types, spelling + " not in " + str(sorted(ref_types))
print("ok")
)py");
  std::string out;
  const std::string command = "'" + *python + "' '" + script + "' '" + trace + "' '" +
                              std::string(pytorch_dtype_name("float32")) + "' '" +
                              std::string(pytorch_dtype_name("float16")) + "' '" +
                              std::string(pytorch_dtype_name("bfloat16")) + "' '" +
                              std::string(pytorch_dtype_name("int64")) + "' 2>&1";
  EXPECT_EQ(run_command(command, &out), 0) << out;
  EXPECT_NE(out.find("ok"), std::string::npos) << out;
}

}  // namespace
}  // namespace ampscope::test
