// Precision readiness in the session file (issue #30): what the capture hands the
// writer comes back per layer and tensor, the sampled steps added up; a session
// from before the table existed opens with no readiness.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "profiler/store/session_reader.h"
#include "profiler/store/session_view.h"
#include "profiler/store/session_writer.h"
#include "tests/support/test_support.h"

namespace ampscope::profiler {
namespace {

// A tensor whose every format lost `noise` of a signal of 100, with `flushed` of
// its 1000 nonzero values flushed.
TensorQuantization tensor(TensorRole role, double noise, int64_t flushed) {
  TensorQuantization t{role, {}};
  for (QuantMetrics& m : t.formats) {
    m.elements = 1024;
    m.nonzero = 1000;
    m.flushed = flushed;
    m.signal = 100.0;
    m.noise = noise;
    m.scale_log2_min = -3.0;
    m.scale_log2_max = 1.0;
  }
  return t;
}

std::vector<ReadinessSample> step_samples(int64_t step, int64_t input_flushed) {
  return {{step, "blocks.0.attn.qkv", tensor(TensorRole::weight, 1e-2, 0)},
          {step, "blocks.0.attn.qkv", tensor(TensorRole::input_activation, 1e-2, input_flushed)},
          {step, "blocks.0.attn.qkv", tensor(TensorRole::weight_gradient, 1e-2, 0)},
          {step, "head", tensor(TensorRole::weight, 1e-2, 0)}};
}

void write_session(const std::string& path) {
  auto writer = SessionWriter::create(path, SessionMeta{});
  StepRecord step;
  step.step = 10;
  writer->append_step(step);
  writer->append_readiness(step_samples(10, 0));
  writer->append_readiness(step_samples(20, 300));
  writer->close();
  ASSERT_EQ(writer->last_error(), "");
}

TEST(ReadinessStore, TheSampledStepsComeBackAddedUpPerLayerAndTensor) {
  test::ScratchDir dir;
  const std::string path = dir / "s.ampscope";
  write_session(path);
  const ReadinessTotals totals = SessionReader::open(path).readiness();
  EXPECT_EQ(totals.sampled_steps(), 2);
  EXPECT_EQ(totals.roles(), (std::vector<TensorRole>{TensorRole::weight, TensorRole::input_activation,
                                                      TensorRole::weight_gradient}));
  const std::vector<LayerReadiness> layers = totals.layers();
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].layer, "blocks.0.attn.qkv");  // as written
  EXPECT_EQ(layers[1].layer, "head");
  ASSERT_EQ(layers[0].tensors.size(), 3u);
  const QuantMetrics& input = layers[0].tensors[1].formats[static_cast<int>(QuantFormat::nvfp4)];
  EXPECT_EQ(layers[0].tensors[1].role, TensorRole::input_activation);
  EXPECT_EQ(input.elements, 2048);
  EXPECT_EQ(input.nonzero, 2000);
  EXPECT_EQ(input.flushed, 300);
  EXPECT_DOUBLE_EQ(input.signal, 200.0);
  EXPECT_DOUBLE_EQ(input.scale_spread_log2(), 4.0);
  // 40 dB, but 15% of the input flushed over both steps: borderline for NVFP4 (ready
  // up to 10%), and out of every fp8 format (borderline up to 5%).
  EXPECT_EQ(layers[0].targets[static_cast<int>(QuantTarget::nvfp4)], Readiness::borderline);
  EXPECT_EQ(layers[0].targets[static_cast<int>(QuantTarget::fp8)], Readiness::keep);
  const ReadinessReason why = target_reason(layers[0], QuantTarget::nvfp4);
  EXPECT_EQ(why.tensor, TensorRole::input_activation);
  EXPECT_EQ(why.metric, ReadinessMetric::flushed);
  EXPECT_EQ(describe_metric(why.metric, why.value), "15% flushed");
  EXPECT_EQ(layers[1].overall, Readiness::ready);
  EXPECT_EQ(layers[1].best_target, QuantTarget::nvfp4);
  EXPECT_EQ(describe_metric(ReadinessMetric::sqnr, target_reason(layers[1], QuantTarget::nvfp4).value), "40.0 dB");

  // The one loader every view takes holds the same.
  const SessionView view = load_session_view(path);
  EXPECT_EQ(view.readiness.sampled_steps(), 2);
  EXPECT_EQ(view.readiness.layers().size(), 2u);
}

TEST(ReadinessStore, ASessionFromBeforeTheTableOpensWithNoReadiness) {
  test::ScratchDir dir;
  const std::string path = dir / "older.ampscope";
  write_session(path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE readiness", nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
  const SessionView view = load_session_view(path);
  EXPECT_TRUE(view.readiness.empty());
  EXPECT_EQ(view.readiness.sampled_steps(), 0);
  EXPECT_EQ(view.steps.size(), 1u);
}

TEST(ReadinessStore, ThresholdsAndMeasuredTensorsAreSaidInWords) {
  EXPECT_EQ(describe_thresholds(QuantElement::e2m1),
            "e2m1 (NVFP4): ready at >= 17 dB SQNR, <= 10% flushed, <= 0.1% saturated; borderline at >= 14 dB, "
            "<= 20%, <= 1%");
  EXPECT_EQ(describe_thresholds(QuantElement::e4m3).substr(0, 23), "e4m3 (fp8 e4m3, MXFP8):");
  EXPECT_EQ(describe_measured_tensors({TensorRole::weight, TensorRole::input_activation}), "weights and layer inputs");
  const std::string all =
      describe_measured_tensors({TensorRole::weight, TensorRole::input_activation, TensorRole::weight_gradient});
  EXPECT_EQ(all.substr(0, 42), "weights, layer inputs and weight gradients");
  EXPECT_NE(all.find("not captured"), std::string::npos) << all;
}

}  // namespace
}  // namespace ampscope::profiler
