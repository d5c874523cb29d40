// The op observer on real models under CPU autocast: what it records and how it
// classifies, checked against PyTorch's own profiler where Python torch is there.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>

#include "engine/autocast_guard.h"
#include "engine/training_run.h"
#include "profiler/capture/op_observer.h"
#include "profiler/export/chrome_trace.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_configs.h"

namespace ampscope::profiler {
namespace {

using engine::ModelKind;
using engine::Precision;

engine::TrainConfig gpt_config(Precision precision) { return test::tiny_gpt(precision, 2); }

std::vector<OpRecord> record_one_step(const engine::TrainConfig& config) {
  engine::TrainingRun run(config);
  OpObserver observer;
  observer.begin_step(1);
  run.step(1);
  observer.end_step();
  return observer.collect();
}

const OpRecord* find(const std::vector<OpRecord>& ops, const std::string& name, Phase phase,
                     const std::string& module = "") {
  for (const auto& op : ops)
    if (op.name == name && op.phase == phase && (module.empty() || op.module == module)) return &op;
  return nullptr;
}

class ObserverOnGpt : public ::testing::TestWithParam<Precision> {};

TEST_P(ObserverOnGpt, ClassifiesAutocastDecisions) {
  const Precision precision = GetParam();
  const std::string low = precision == Precision::kBF16 ? "bfloat16" : "float16";
  const auto ops = record_one_step(gpt_config(precision));
  ASSERT_GT(ops.size(), 50u);

  const OpRecord* qkv = find(ops, "aten::linear", Phase::kForward, "blocks.0.attn.qkv");
  ASSERT_NE(qkv, nullptr) << [&] {
    std::string seen;
    for (const auto& op : ops)
      if (op.parent_id == 0) seen += fmt::format("{} [{}] {}\n", op.name, to_string(op.phase), op.module);
    return seen;
  }();
  EXPECT_EQ(qkv->category, OpCategory::kDemoted);
  EXPECT_EQ(qkv->input_dtypes.at(1), "float32");  // the fp32 master weight
  EXPECT_EQ(qkv->output_dtypes.at(0), low);

  const OpRecord* matmul = find(ops, "aten::matmul", Phase::kForward, "blocks.0.attn");
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->output_dtypes.at(0), low);

  const OpRecord* loss = find(ops, "aten::cross_entropy_loss", Phase::kForward);
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->input_dtypes.at(0), low);
  EXPECT_EQ(loss->output_dtypes.at(0), "float32");
  EXPECT_EQ(loss->category, OpCategory::kKeptFp32);

  // Autocast's casts of the fp32 weights sit under the op they were made for.
  int64_t casts_under_linear = 0, cast_bytes = 0;
  for (const auto& op : ops) {
    if (op.category != OpCategory::kAutocastCast) continue;
    for (const auto& parent : ops)
      if (parent.id == op.parent_id && parent.name == "aten::linear") ++casts_under_linear;
    cast_bytes += op.cast_bytes;
  }
  EXPECT_GT(casts_under_linear, 0);
  EXPECT_GT(cast_bytes, 0);

  // Backward ops are attributed to the module of their forward op.
  bool backward_in_qkv = false;
  for (const auto& op : ops)
    backward_in_qkv = backward_in_qkv || (op.phase == Phase::kBackward && op.module == "blocks.0.attn.qkv");
  EXPECT_TRUE(backward_in_qkv);
  // The optimizer's ops are recorded in their phase.
  EXPECT_NE(std::find_if(ops.begin(), ops.end(), [](const OpRecord& o) { return o.phase == Phase::kOptimizer; }),
            ops.end());
  // Records are well formed.
  std::set<uint64_t> ids;
  for (const auto& op : ops) {
    EXPECT_TRUE(ids.insert(op.id).second);
    EXPECT_LE(op.start_ns, op.end_ns);
    EXPECT_EQ(op.step, 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, ObserverOnGpt, ::testing::Values(Precision::kBF16, Precision::kFP16),
                         [](const auto& info) { return std::string(engine::to_string(info.param)); });

TEST(OpObserver, Fp32RunHasNoAutocastDecisions) {
  const auto ops = record_one_step(gpt_config(Precision::kFP32));
  for (const auto& op : ops) {
    EXPECT_NE(op.category, OpCategory::kDemoted) << op.name;
    EXPECT_NE(op.category, OpCategory::kAutocastCast) << op.name;
  }
}

TEST(OpObserver, CatIsPromotedAndExplicitCastsAreExplicit) {
  OpObserver observer;
  observer.begin_step(3);
  {
    engine::AutocastGuard guard(c10::kCPU, at::kBFloat16);
    const at::Tensor low = at::linear(at::randn({2, 4}), at::randn({4, 4}));
    (void)at::cat({low, at::randn({2, 4})});
    (void)at::stack({low, at::randn({2, 4})});
  }
  (void)at::randn({3}).to(at::kHalf);
  observer.end_step();
  const auto ops = observer.collect();
  auto category_of = [&](const char* name) {
    for (const auto& op : ops)
      if (op.name == name && op.parent_id == 0) return op.category;
    ADD_FAILURE() << name << " not recorded";
    return OpCategory::kUnchanged;
  };
  EXPECT_EQ(category_of("aten::cat"), OpCategory::kPromoted);
  EXPECT_EQ(category_of("aten::stack"), OpCategory::kPromoted);
  EXPECT_EQ(category_of("aten::to"), OpCategory::kExplicitCast);
}

TEST(OpObserver, UnsampledStepsRecordNothing) {
  engine::TrainingRun run(gpt_config(Precision::kBF16));
  OpObserver observer;
  run.step(1);
  observer.begin_step(2);
  run.step(2);
  observer.end_step();
  run.step(3);
  const auto ops = observer.collect();
  ASSERT_FALSE(ops.empty());
  for (const auto& op : ops) EXPECT_EQ(op.step, 2);
}

class MatchesPyTorchProfiler : public ::testing::TestWithParam<Precision> {};

TEST_P(MatchesPyTorchProfiler, InputDtypesOfTheSameOps) {
  auto python = test::python_with_torch();
  if (!python) GTEST_SKIP() << "no Python with torch configured (AMPSCOPE_PYTHON)";
  const Precision precision = GetParam();
  std::string out;
  const std::string cmd =
      fmt::format("'{}' '{}' {} 2>/dev/null", *python,
                  test::test_source_path("python/profiler_dtypes_reference.py").string(), engine::to_string(precision));
  ASSERT_EQ(test::run_command(cmd, &out), 0) << cmd;
  const auto reference = nlohmann::json::parse(out);

  const auto ops = record_one_step(gpt_config(precision));
  std::map<std::string, std::set<std::vector<std::string>>> ours;
  for (const auto& op : ops) {
    if (op.phase != Phase::kForward || !reference.contains(op.name)) continue;
    std::vector<std::string> types;
    for (const auto& d : op.input_dtypes)
      if (!d.empty()) types.emplace_back(pytorch_dtype_name(d));
    ours[op.name].insert(types);
  }
  ASSERT_GE(reference.size(), 6u) << out;
  for (const auto& [name, tuples] : reference.items()) {
    std::set<std::vector<std::string>> expected;
    for (const auto& t : tuples) expected.insert(t.get<std::vector<std::string>>());
    EXPECT_EQ(ours[name], expected) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, MatchesPyTorchProfiler, ::testing::Values(Precision::kBF16, Precision::kFP16),
                         [](const auto& info) { return std::string(engine::to_string(info.param)); });

}  // namespace
}  // namespace ampscope::profiler
