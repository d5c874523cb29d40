// Precision readiness (issue #30): the simulated quantization against torchao's
// own conversions, element for element, on crafted and random matrices
// (tests/python/quantization_reference.py), and the verdicts on crafted layers.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "profiler/analysis/quantization_readiness.h"
#include "profiler/capture/quantization_sim.h"
#include "tests/support/test_support.h"

namespace ampscope::profiler {
namespace {

std::vector<float> read_floats(std::istringstream& in, size_t n) {
  std::vector<float> v(n);
  std::string word;
  for (size_t i = 0; i < n && in >> word; ++i) v[i] = static_cast<float>(std::strtod(word.c_str(), nullptr));
  return v;
}

struct ReferenceFormat {
  std::vector<float> dequantized, scales;
  double sqnr_db = 0.0;
};

struct ReferenceCase {
  std::string name;
  int64_t rows = 0, cols = 0;
  std::vector<float> x;
  std::map<std::string, ReferenceFormat> formats;  // by QuantFormatSpec::key
  std::vector<std::string> skipped;
};

std::vector<ReferenceCase> parse_reference(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::vector<ReferenceCase> cases;
  std::string line;
  ReferenceFormat* current = nullptr;
  while (std::getline(file, line)) {
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    if (tag == "case") {
      cases.emplace_back();
      in >> cases.back().name >> cases.back().rows >> cases.back().cols;
    } else if (tag == "x") {
      cases.back().x = read_floats(in, static_cast<size_t>(cases.back().rows * cases.back().cols));
    } else if (tag == "format") {
      std::string key;
      in >> key;
      current = &cases.back().formats[key];
    } else if (tag == "skip") {
      std::string key;
      in >> key;
      cases.back().skipped.push_back(key);
    } else if (tag == "dq") {
      current->dequantized = read_floats(in, static_cast<size_t>(cases.back().rows * cases.back().cols));
    } else if (tag == "scales") {
      size_t n = 0;
      in >> n;
      current->scales = read_floats(in, n);
    } else if (tag == "sqnr") {
      std::string v;
      in >> v;
      current->sqnr_db = v == "inf" ? std::numeric_limits<double>::infinity() : std::strtod(v.c_str(), nullptr);
    }
  }
  return cases;
}

at::Tensor as_tensor(const std::vector<float>& v, int64_t rows, int64_t cols) {
  return at::tensor(v, at::kFloat).reshape({rows, cols});
}

std::array<QuantMetrics, kQuantFormatCount> all_metrics_of(const at::Tensor& matrix) {
  const QuantizationSums sums = quantization_sums({matrix});
  return read_quantization_sums(sums.sums[0].cpu(), sums.elements[0]);
}

QuantMetrics metrics_of(const at::Tensor& matrix, QuantFormat f) { return all_metrics_of(matrix)[static_cast<int>(f)]; }

TEST(QuantizationReadiness, MatchesTorchaoElementForElement) {
  auto python = test::python_with_torch();
  if (!python) GTEST_SKIP() << "no Python with torch configured (AMPSCOPE_PYTHON)";
  if (test::run_command("'" + *python + "' -c 'import torchao' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "torchao is not installed beside torch (PYTHON_TEST_PACKAGES in scripts/deps.env)";
  test::ScratchDir dir;
  const std::string cmd = "'" + *python + "' '" + test::test_source_path("python/quantization_reference.py").string() +
                          "' '" + (dir / "reference.txt").string() + "'";
  ASSERT_EQ(test::run_command(cmd), 0) << cmd;
  const std::vector<ReferenceCase> cases = parse_reference(dir / "reference.txt");
  ASSERT_GE(cases.size(), 10u);
  int compared = 0;
  for (const ReferenceCase& c : cases) {
    const at::Tensor x = as_tensor(c.x, c.rows, c.cols);
    const auto metrics = all_metrics_of(x);
    for (const QuantFormatSpec& spec : kQuantFormats) {
      const std::string key(spec.key);
      if (std::find(c.skipped.begin(), c.skipped.end(), key) != c.skipped.end()) continue;
      SCOPED_TRACE(c.name + " / " + key);
      ASSERT_TRUE(c.formats.contains(key));
      const ReferenceFormat& ref = c.formats.at(key);
      const SimulatedQuantization q = simulate_quantization(x, spec.format);
      const at::Tensor expected = as_tensor(ref.dequantized, c.rows, c.cols);
      // Exactly equal (0 == -0), element for element.
      const at::Tensor differs = q.dequantized != expected;
      EXPECT_EQ(differs.sum().item<int64_t>(), 0)
          << "first differing element: " << (differs.any().item<bool>() ? differs.reshape(-1).nonzero()[0].item<int64_t>() : -1);
      EXPECT_TRUE(at::equal(q.scales.reshape(-1), at::tensor(ref.scales, at::kFloat))) << "scales";
      // torchao's compute_error sums in float32; ours in float64 from float32 squares.
      const double sqnr = metrics[static_cast<int>(spec.format)].sqnr_db();
      if (std::isinf(ref.sqnr_db)) {
        EXPECT_TRUE(std::isinf(sqnr)) << sqnr;
      } else {
        EXPECT_NEAR(sqnr, ref.sqnr_db, 1e-3);
      }
      ++compared;
    }
  }
  EXPECT_EQ(compared, static_cast<int>(cases.size()) * kQuantFormatCount - 1);  // NVFP4 of zeros: NaN in torchao
}

TEST(QuantizationReadiness, CountsFlushedSaturatedAndScaleSpread) {
  // Tensorwise e4m3: amax 1e4 maps to 448, so 1e-3 lands at 4.5e-5, under half of
  // e4m3's smallest subnormal (2^-9): flushed. Nothing saturates.
  const at::Tensor wide = at::tensor({1e4f, 1e-3f, 0.0f, 1.0f}, at::kFloat).reshape({1, 4});
  const QuantMetrics tw = metrics_of(wide, QuantFormat::fp8_e4m3_tensorwise);
  EXPECT_EQ(tw.nonzero, 3);
  EXPECT_EQ(tw.flushed, 1);
  EXPECT_EQ(tw.saturated, 0);
  EXPECT_DOUBLE_EQ(tw.scale_spread_log2(), 0.0);

  // MXFP8's RCEIL rule: the block scale is 2^ceil(log2(amax / 448)), so a block
  // max of 500 gets 2^1 and lands at 250, not clamped (the OCP floor rule's 2^0
  // would clamp it at 448); the second block's max 2^-10 gets 2^ceil(-10 - 8.8).
  at::Tensor block = at::ones({1, 64}, at::kFloat);
  block[0][0] = 500.0f;
  block.slice(1, 32, 64).mul_(1.0f / 1024);
  const QuantMetrics mx = metrics_of(block, QuantFormat::mxfp8);
  EXPECT_EQ(mx.saturated, 0);
  EXPECT_EQ(mx.flushed, 0);
  EXPECT_DOUBLE_EQ(mx.scale_spread_log2(), 1.0 - -18.0);

  // An all-zero tensor loses nothing in any format.
  for (const QuantMetrics& m : all_metrics_of(at::zeros({4, 32}))) {
    EXPECT_TRUE(std::isinf(m.sqnr_db()) && m.sqnr_db() > 0);
    EXPECT_EQ(m.flushed_share(), 0.0);
  }
}

TEST(QuantizationReadiness, ABatchOfTensorsMeasuresEachAsAlone) {
  // One pass over tensors of every shape the capture meets (widths that are no
  // multiple of a block, a 3-D activation, a convolution's input, all zeros, a
  // gradient's tiny values, an empty one) gives each the sums it gets alone.
  at::manual_seed(32);
  const std::vector<at::Tensor> matrices{
      at::randn({5, 40}) * 3.0,
      scaling_matrix(at::randn({2, 3, 7}).to(at::kBFloat16), TensorRole::input_activation),
      at::zeros({4, 32}),
      at::empty({0, 16}),
      at::randn({64, 100}) * 1e-20,
      scaling_matrix(at::randn({2, 8, 3, 3}), TensorRole::input_activation, /*channels_first=*/true),
      scaling_matrix(at::randn({6, 8, 3, 3}), TensorRole::weight),
  };
  const QuantizationSums batch = quantization_sums(matrices);
  ASSERT_EQ(batch.sums.size(0), static_cast<int64_t>(matrices.size()));
  for (size_t i = 0; i < matrices.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(batch.elements[i], matrices[i].numel());
    const auto together = read_quantization_sums(batch.sums[static_cast<int64_t>(i)].cpu(), batch.elements[i]);
    const auto alone = all_metrics_of(matrices[i]);
    for (int f = 0; f < kQuantFormatCount; ++f) {
      SCOPED_TRACE(quant_format(static_cast<QuantFormat>(f)).key);
      EXPECT_EQ(together[f].nonzero, alone[f].nonzero);
      EXPECT_EQ(together[f].flushed, alone[f].flushed);
      EXPECT_EQ(together[f].saturated, alone[f].saturated);
      EXPECT_DOUBLE_EQ(together[f].signal, alone[f].signal);
      EXPECT_DOUBLE_EQ(together[f].noise, alone[f].noise);
      EXPECT_DOUBLE_EQ(together[f].scale_spread_log2(), alone[f].scale_spread_log2());
    }
  }
  // The channels of the convolution's input are its rows' elements: 2 x 3 x 3 rows of 8.
  EXPECT_EQ(matrices[5].size(-1), 8);
  // A gradient's 1e-20 squared stays in range: its SQNR in the block formats (no
  // amax floor, unlike torchao's fp8 recipes' 1e-12) is that of the same values near 1.
  const auto tiny = all_metrics_of(matrices[4]);
  const auto unit = all_metrics_of(matrices[4] * std::ldexp(1.0, 66));
  for (QuantFormat f : {QuantFormat::mxfp8, QuantFormat::nvfp4}) {
    EXPECT_NEAR(tiny[static_cast<int>(f)].sqnr_db(), unit[static_cast<int>(f)].sqnr_db(), 1e-3);
    EXPECT_GT(tiny[static_cast<int>(f)].sqnr_db(), 15.0);
  }
}

TEST(QuantizationReadiness, AHugeTensorIsMeasuredOnSpacedRowsWithItsWholeAmax) {
  // 2^19 + 1 rows of 32: past the 2^24 elements of a pass, so every second row is
  // measured; the largest value sits in a row that is not, and still sets the
  // tensorwise scale, as it does in training.
  const int64_t rows = (int64_t{1} << 19) + 1;
  at::Tensor x = at::ones({rows, 32});
  x[1][0] = 1e4f;
  const QuantizationSums sums = quantization_sums({x});
  EXPECT_EQ(sums.elements[0], ((rows + 1) / 2) * 32);
  const auto m = read_quantization_sums(sums.sums[0].cpu(), sums.elements[0]);
  const QuantMetrics& tensorwise = m[static_cast<int>(QuantFormat::fp8_e4m3_tensorwise)];
  EXPECT_NEAR(tensorwise.scale_log2_max, std::log2(1e4 / 448.0), 1e-5);
  EXPECT_EQ(tensorwise.nonzero, sums.elements[0]);
}

// A layer's verdicts from its weight and its input, as the GEMM sees them.
LayerReadiness layer_of(const std::string& name, const at::Tensor& weight, const at::Tensor& input) {
  std::vector<TensorQuantization> tensors;
  for (const auto& [role, t] : {std::pair{TensorRole::weight, weight}, std::pair{TensorRole::input_activation, input}}) {
    tensors.push_back({role, all_metrics_of(scaling_matrix(t, role))});
  }
  return assess_layer(name, std::move(tensors));
}

TEST(QuantizationReadiness, AnOutlierChannelKeepsItsLayerOutOfNvfp4) {
  at::manual_seed(30);
  // Two Linear(256 -> 128) layers fed tokens [batch 4, sequence 16, 256]. The second
  // one's input has one outlier feature a hundred times the others, as the
  // "emergent features" of large transformers (LLM.int8, Dettmers et al. 2022).
  const at::Tensor weight = at::randn({128, 256}) * 0.05;
  const at::Tensor input = at::randn({4, 16, 256});
  at::Tensor outlier_input = input.clone();
  outlier_input.select(2, 40).mul_(100.0);
  const LayerReadiness plain = layer_of("plain", weight, input);
  const LayerReadiness outlier = layer_of("outlier", weight, outlier_input);
  const auto target = [](const LayerReadiness& l, QuantTarget t) { return l.targets[static_cast<int>(t)]; };

  for (QuantTarget t : {QuantTarget::fp8, QuantTarget::mxfp8, QuantTarget::nvfp4})
    EXPECT_EQ(target(plain, t), Readiness::ready) << quant_target_name(t);
  EXPECT_EQ(plain.overall, Readiness::ready);
  EXPECT_EQ(plain.best_target, QuantTarget::nvfp4);

  // The 15 other features in the outlier's 16-blocks fall under NVFP4's smallest
  // step: a sixteenth of the input flushes on top of what N(0,1) loses.
  EXPECT_NE(target(outlier, QuantTarget::nvfp4), Readiness::ready);
  const QuantMetrics& input_nvfp4 = outlier.tensors[1].formats[static_cast<int>(QuantFormat::nvfp4)];
  EXPECT_GT(input_nvfp4.flushed_share(), readiness_thresholds(QuantElement::e2m1).ready_flushed_share);
  // ... while its SQNR, which the outlier's energy holds up, alone would pass.
  EXPECT_GT(input_nvfp4.sqnr_db(), readiness_thresholds(QuantElement::e2m1).ready_sqnr_db);
  // FP8 with 2^17 of range and MXFP8's 32-blocks, each scaled on its own, take it.
  EXPECT_EQ(target(outlier, QuantTarget::fp8), Readiness::ready);
  EXPECT_EQ(target(outlier, QuantTarget::mxfp8), Readiness::ready);
  EXPECT_EQ(outlier.best_target, QuantTarget::mxfp8);
}

TEST(QuantizationReadiness, AWideRangeTensorIsKeptInBf16) {
  // Log-normal magnitudes over some 2^25: tensorwise e4m3 flushes most of them.
  at::manual_seed(31);
  const at::Tensor x = at::exp(at::randn({64, 256}) * 6.0) * at::sign(at::randn({64, 256}));
  const QuantMetrics m = metrics_of(scaling_matrix(x, TensorRole::input_activation), QuantFormat::fp8_e4m3_tensorwise);
  EXPECT_GT(m.flushed_share(), readiness_thresholds(QuantElement::e4m3).borderline_flushed_share);
  EXPECT_EQ(readiness(QuantFormat::fp8_e4m3_tensorwise, m), Readiness::keep);
}

}  // namespace
}  // namespace ampscope::profiler
