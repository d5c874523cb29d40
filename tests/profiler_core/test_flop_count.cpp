// FLOP counts of GEMM/conv/attention ops from recorded shapes, checked against
// hand-derived figures and against torch.utils.flop_counter where Python torch is there.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "profiler/analysis/flop_count.h"
#include "tests/support/test_support.h"

namespace ampscope::profiler {
namespace {

OpStats row(const std::string& name, std::vector<Shape> shapes, int64_t calls,
            const std::string& module = "fc", bool top_level = false) {
  OpStats r;
  r.name = name;
  r.module = module;
  r.input_shapes = std::move(shapes);
  r.calls = calls;
  r.top_level = top_level;
  return r;
}

TEST(OpFlops, GemmsCountTwoFlopsPerMultiplyAdd) {
  // mm: [M=32, K=64] x [64, N=16] -> 2 * 32 * 16 * 64
  EXPECT_DOUBLE_EQ(op_flops("aten::mm", {{32, 64}, {64, 16}}), 65536);
  // addmm: the bias is input 0 and its add is not counted.
  EXPECT_DOUBLE_EQ(op_flops("aten::addmm", {{16}, {32, 64}, {64, 16}, {}, {}}), 65536);
  // bmm: 4 batches of the above.
  EXPECT_DOUBLE_EQ(op_flops("aten::bmm", {{4, 32, 64}, {4, 64, 16}}), 4 * 65536);
  EXPECT_DOUBLE_EQ(op_flops("aten::baddbmm", {{4, 32, 16}, {4, 32, 64}, {4, 64, 16}, {}, {}}),
                   4 * 65536);
  // Overload names do not change the maths.
  EXPECT_DOUBLE_EQ(op_flops("aten::mm.out", {{32, 64}, {64, 16}, {32, 16}}), 65536);
}

TEST(OpFlops, LinearAndMatmulFoldAndBroadcastBatchDimensions) {
  // linear: x [8, 10, K=64], w [N=16, 64]: M = 80.
  EXPECT_DOUBLE_EQ(op_flops("aten::linear", {{8, 10, 64}, {16, 64}, {16}}), 2.0 * 80 * 16 * 64);
  // matmul [2, 3, 32, 64] x [64, 16]: 6 GEMMs of 32x64x16.
  EXPECT_DOUBLE_EQ(op_flops("aten::matmul", {{2, 3, 32, 64}, {64, 16}}), 6 * 65536.0);
  // Broadcast batch: [2, 1, 32, 64] x [3, 64, 16] -> batch 2 x 3.
  EXPECT_DOUBLE_EQ(op_flops("aten::matmul", {{2, 1, 32, 64}, {3, 64, 16}}), 6 * 65536.0);
  // Vector x matrix: M = 1.
  EXPECT_DOUBLE_EQ(op_flops("aten::matmul", {{64}, {64, 16}}), 2.0 * 16 * 64);
}

TEST(OpFlops, ConvolutionAssumesSamePaddingStrideOne) {
  // x [2, 3, 32, 32], w [16, 3, 3, 3]: output [2, 16, 32, 32], each a 27-long dot product.
  const std::vector<Shape> conv{{2, 3, 32, 32}, {16, 3, 3, 3}, {16}, {}, {}, {}, {}, {}, {}};
  EXPECT_DOUBLE_EQ(op_flops("aten::convolution", conv), 2.0 * 2 * 16 * 32 * 32 * 27);
  EXPECT_DOUBLE_EQ(op_flops("aten::conv2d", conv), 2.0 * 2 * 16 * 32 * 32 * 27);
  // Depthwise: weight [32, 1, 3, 3] (C/groups = 1): 9 multiply-adds per output.
  EXPECT_DOUBLE_EQ(op_flops("aten::convolution", {{1, 32, 8, 8}, {32, 1, 3, 3}}),
                   2.0 * 32 * 64 * 9);
  // conv1d: x [4, 8, 100], w [16, 8, 5].
  EXPECT_DOUBLE_EQ(op_flops("aten::conv1d", {{4, 8, 100}, {16, 8, 5}}), 2.0 * 4 * 16 * 100 * 40);
  // Transposed: every input element scatters into C_out x kernel outputs.
  EXPECT_DOUBLE_EQ(op_flops("aten::conv_transpose2d", {{1, 16, 8, 8}, {16, 8, 3, 3}}),
                   2.0 * 64 * 16 * 8 * 9);
}

TEST(OpFlops, ConvolutionBackwardIsTwoForwardsAtTheGradOutputSize) {
  // grad_output [2, 16, 16, 16] (a stride-2 conv of [2, 3, 32, 32] with [16, 3, 3, 3]).
  const double forward = 2.0 * 2 * 16 * 16 * 16 * 27;
  EXPECT_DOUBLE_EQ(op_flops("aten::convolution_backward",
                            {{2, 16, 16, 16}, {2, 3, 32, 32}, {16, 3, 3, 3}, {}, {}, {}, {}}),
                   2 * forward);
}

TEST(OpFlops, AttentionForwardAndBackward) {
  // q, k, v [B=2, H=4, S=128, E=64]: q k^T and p v, each 2 * 8 * 128 * 128 * 64.
  const Shape q{2, 4, 128, 64};
  const double forward = 2 * (2.0 * 8 * 128 * 128 * 64);
  EXPECT_DOUBLE_EQ(op_flops("aten::_scaled_dot_product_flash_attention", {q, q, q, {}, {}}),
                   forward);
  EXPECT_DOUBLE_EQ(op_flops("aten::_scaled_dot_product_efficient_attention", {q, q, q, {}, {}}),
                   forward);
  // Backward (grad_out, q, k, v, ...): five GEMMs, 2.5x forward.
  EXPECT_DOUBLE_EQ(
      op_flops("aten::_scaled_dot_product_flash_attention_for_cpu_backward", {q, q, q, q, q, {}}),
      2.5 * forward);
  // Cross attention: Sq = 16, Sk = 128, Ev = 32.
  EXPECT_DOUBLE_EQ(op_flops("aten::_scaled_dot_product_efficient_attention",
                            {{2, 4, 16, 64}, {2, 4, 128, 64}, {2, 4, 128, 32}}),
                   2.0 * 8 * 16 * 128 * 64 + 2.0 * 8 * 16 * 128 * 32);
}

TEST(OpFlops, ZeroForOtherOpsAndShapesThatDoNotFit) {
  EXPECT_EQ(op_flops("aten::relu", {{32, 64}}), 0);
  EXPECT_EQ(op_flops("aten::add", {{32, 64}, {32, 64}, {}}), 0);
  EXPECT_EQ(op_flops("aten::mm", {{32, 64}}), 0);                     // one operand
  EXPECT_EQ(op_flops("aten::mm", {{64}, {64, 16}}), 0);               // mm needs matrices
  EXPECT_EQ(op_flops("aten::bmm", {{32, 64}, {64, 16}}), 0);          // bmm needs 3-D
  EXPECT_EQ(op_flops("aten::addmm", {{}, {}, {}}), 0);                // shapes not recorded
  EXPECT_EQ(op_flops("aten::convolution", {{2, 3, 32, 32}, {}}), 0);  // no weight shape
  EXPECT_EQ(op_flops("aten::linear", {}), 0);
}

TEST(FlopsPerStep, LinearAndItsAddmmCountOnce) {
  // Two steps of y = x W^T + b with x [32, 64], W [16, 64], and its backward.
  std::vector<OpStats> rows{
      row("aten::linear", {{32, 64}, {16, 64}, {16}}, 2, "fc", true),
      row("aten::t", {{16, 64}}, 2),
      row("aten::addmm", {{16}, {32, 64}, {64, 16}, {}, {}}, 2),
      row("aten::relu", {{32, 16}}, 2, "act", true),
      row("AddmmBackward0", {{32, 16}}, 2, "fc", false),
      row("aten::mm", {{32, 16}, {16, 64}}, 2),  // grad_x = grad_y W
      row("aten::mm", {{16, 32}, {32, 64}}, 2),  // grad_W = grad_y^T x
  };
  rows[4].phase = Phase::kBackward;
  EXPECT_DOUBLE_EQ(flops_per_step(rows, 2), 3 * 65536.0);
  // A table that covers 4 steps with the same calls does half the work per step.
  EXPECT_DOUBLE_EQ(flops_per_step(rows, 4), 1.5 * 65536.0);
}

TEST(FlopsPerStep, MatmulOverBmmAndAttentionWrappersCountOnce) {
  const Shape q{2, 4, 128, 64};
  std::vector<OpStats> rows{
      row("aten::matmul", {{8, 32, 64}, {8, 64, 16}}, 1, "attn", true),
      row("aten::bmm", {{8, 32, 64}, {8, 64, 16}}, 1, "attn"),
      row("aten::scaled_dot_product_attention", {q, q, q, {}, {}, {}}, 1, "attn", true),
      row("aten::_scaled_dot_product_flash_attention_for_cpu", {q, q, q, {}, {}}, 1, "attn"),
      row("aten::_scaled_dot_product_flash_attention_for_cpu_backward", {q, q, q, q, q, {}}, 1,
          "attn"),
  };
  const double attention = 2 * (2.0 * 8 * 128 * 128 * 64);
  EXPECT_DOUBLE_EQ(flops_per_step(rows, 1), 8 * 65536.0 + attention + 2.5 * attention);
  // The math fallback runs bmm underneath: only those count.
  std::vector<OpStats> math{
      row("aten::_scaled_dot_product_attention_math", {q, q, q, {}, {}}, 1, "attn", true),
      row("aten::bmm", {{8, 128, 64}, {8, 64, 128}}, 1, "attn")};
  EXPECT_DOUBLE_EQ(flops_per_step(math, 1), 2.0 * 8 * 128 * 128 * 64);
}

TEST(FlopsPerStep, ConvolutionTakesItsOutputSizeFromTheBackwardRow) {
  const std::vector<Shape> forward{{2, 3, 32, 32}, {16, 3, 3, 3}, {}, {}, {}, {}, {}, {}, {}};
  std::vector<OpStats> rows{row("aten::conv2d", forward, 1, "conv1", true),
                            row("aten::convolution", forward, 1, "conv1")};
  // No backward row: stride 1 assumed, output 32x32.
  EXPECT_DOUBLE_EQ(flops_per_step(rows, 1), 2.0 * 2 * 16 * 1024 * 27);

  // The backward row says the output is 16x16 (stride 2). The network's input
  // needs no gradient and the conv has no bias: one output (grad_weight), one forward's work.
  OpStats backward =
      row("aten::convolution_backward",
          {{2, 16, 16, 16}, {2, 3, 32, 32}, {16, 3, 3, 3}, {}, {}, {}, {}}, 1, "conv1");
  backward.phase = Phase::kBackward;
  backward.output_dtypes = {"float32"};
  rows.push_back(backward);
  const double at_16x16 = 2.0 * 2 * 16 * 256 * 27;
  EXPECT_DOUBLE_EQ(flops_per_step(rows, 1), 2 * at_16x16);
  // grad_input and grad_weight: two forwards' work in backward.
  rows.back().output_dtypes = {"float32", "float32"};
  EXPECT_DOUBLE_EQ(flops_per_step(rows, 1), 3 * at_16x16);
  // Output mask unknown (no outputs recorded): both assumed.
  rows.back().output_dtypes.clear();
  EXPECT_DOUBLE_EQ(flops_per_step(rows, 1), 3 * at_16x16);
  // A backward row without its module still matches by operand shapes...
  rows.back().module = "";
  EXPECT_DOUBLE_EQ(flops_per_step(rows, 1), 3 * at_16x16);
  // ...unless the same shapes were seen with another output size (another stride).
  OpStats other = rows.back();
  other.input_shapes[0] = {2, 16, 32, 32};
  other.module = "conv2";
  rows.push_back(other);
  EXPECT_DOUBLE_EQ(flops_per_step(rows, 1), 2.0 * 2 * 16 * 1024 * 27 + 2 * at_16x16 + 8 * at_16x16);
  // A backward row of other operand shapes does not decide this conv's output size.
  rows.pop_back();
  rows.back().input_shapes[1] = {2, 3, 64, 64};
  EXPECT_DOUBLE_EQ(flops_per_step(rows, 1), 2.0 * 2 * 16 * 1024 * 27 + 2 * at_16x16);
}

TEST(FlopsPerStep, ZeroWithoutProfiledSteps) {
  const std::vector<OpStats> rows{row("aten::mm", {{32, 64}, {64, 16}}, 4)};
  EXPECT_EQ(flops_per_step(rows, 0), 0);
  EXPECT_EQ(flops_per_step(rows, -1), 0);
  EXPECT_EQ(flops_per_step({}, 3), 0);
}

// The same calls counted by torch.utils.flop_counter.FlopCounterMode (attention
// through its formulas: FlopCounterMode has none for the CPU flash kernel).
constexpr const char* kReferenceScript = R"PY(
import json, torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode, sdpa_flop_count, sdpa_backward_flop_count
def count(fn):
    with FlopCounterMode(display=False) as mode:
        fn()
    return mode.get_total_flops()
r = torch.randn
def linear_train():
    x = r(32, 64, requires_grad=True); w = r(16, 64, requires_grad=True); b = r(16, requires_grad=True)
    F.linear(x, w, b).sum().backward()
def conv_train():
    x = r(2, 8, 32, 32, requires_grad=True); w = r(16, 8, 3, 3, requires_grad=True)
    F.conv2d(x, w, stride=2, padding=1).sum().backward()
q = [2, 4, 128, 64]
print(json.dumps({
    "mm": count(lambda: torch.mm(r(32, 64), r(64, 16))),
    "addmm": count(lambda: torch.addmm(r(16), r(32, 64), r(64, 16))),
    "bmm": count(lambda: torch.bmm(r(4, 32, 64), r(4, 64, 16))),
    "baddbmm": count(lambda: torch.baddbmm(r(4, 32, 16), r(4, 32, 64), r(4, 64, 16))),
    "linear3d": count(lambda: F.linear(r(8, 10, 64), r(16, 64), r(16))),
    "conv_same": count(lambda: F.conv2d(r(2, 3, 32, 32), r(16, 3, 3, 3), padding=1)),
    "linear_train": count(linear_train),
    "conv_train": count(conv_train),
    "sdpa": sdpa_flop_count(q, q, q) + sdpa_backward_flop_count(q, q, q, q),
}))
)PY";

TEST(FlopsPerStep, MatchesPyTorchFlopCounter) {
  const auto python = test::python_with_torch();
  if (!python) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  test::ScratchDir dir;
  test::write_file(dir / "flops.py", kReferenceScript);
  std::string out;
  ASSERT_EQ(test::run_command("'" + *python + "' '" + (dir / "flops.py").string() + "'", &out), 0)
      << out;
  const auto expected = nlohmann::json::parse(out);

  EXPECT_DOUBLE_EQ(op_flops("aten::mm", {{32, 64}, {64, 16}}), expected["mm"].get<double>());
  EXPECT_DOUBLE_EQ(op_flops("aten::addmm", {{16}, {32, 64}, {64, 16}, {}, {}}),
                   expected["addmm"].get<double>());
  EXPECT_DOUBLE_EQ(op_flops("aten::bmm", {{4, 32, 64}, {4, 64, 16}}),
                   expected["bmm"].get<double>());
  EXPECT_DOUBLE_EQ(op_flops("aten::baddbmm", {{4, 32, 16}, {4, 32, 64}, {4, 64, 16}, {}, {}}),
                   expected["baddbmm"].get<double>());
  EXPECT_DOUBLE_EQ(op_flops("aten::linear", {{8, 10, 64}, {16, 64}, {16}}),
                   expected["linear3d"].get<double>());
  EXPECT_DOUBLE_EQ(op_flops("aten::conv2d", {{2, 3, 32, 32}, {16, 3, 3, 3}, {}, {}, {}, {}, {}}),
                   expected["conv_same"].get<double>());

  // One training step's op table, as the profiler records it.
  std::vector<OpStats> linear{row("aten::linear", {{32, 64}, {16, 64}, {16}}, 1, "fc", true),
                              row("aten::addmm", {{16}, {32, 64}, {64, 16}, {}, {}}, 1),
                              row("aten::mm", {{32, 16}, {16, 64}}, 1),
                              row("aten::mm", {{16, 32}, {32, 64}}, 1)};
  EXPECT_DOUBLE_EQ(flops_per_step(linear, 1), expected["linear_train"].get<double>());

  const std::vector<Shape> x_w{{2, 8, 32, 32}, {16, 8, 3, 3}, {}, {}, {}, {}, {}};
  std::vector<OpStats> conv{row("aten::conv2d", x_w, 1, "conv", true),
                            row("aten::convolution", x_w, 1, "conv"),
                            row("aten::_convolution", x_w, 1, "conv"),
                            row("aten::convolution_backward",
                                {{2, 16, 16, 16}, {2, 8, 32, 32}, {16, 8, 3, 3}}, 1, "conv")};
  conv.back().output_dtypes = {"float32", "float32"};  // grad_input, grad_weight; no bias
  EXPECT_DOUBLE_EQ(flops_per_step(conv, 1), expected["conv_train"].get<double>());

  const Shape q{2, 4, 128, 64};
  std::vector<OpStats> attention{
      row("aten::_scaled_dot_product_efficient_attention", {q, q, q, {}}, 1, "attn"),
      row("aten::_scaled_dot_product_efficient_attention_backward", {q, q, q, q, {}, q}, 1,
          "attn")};
  EXPECT_DOUBLE_EQ(flops_per_step(attention, 1), expected["sdpa"].get<double>());
}

}  // namespace
}  // namespace ampscope::profiler
