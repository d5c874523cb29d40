// Op-level Tensor Core eligibility from op name, dtypes and shapes.
// What the H100 showed (tests/fixtures/h100-kernels.tsv, issue #10): unaligned
// K/N still run on Tensor Cores since cuBLAS 11, only slower, so alignment is a
// speed hint and never the reason an op missed them.
#include <gtest/gtest.h>

#include "profiler/analysis/tensor_core_eligibility.h"

namespace ampscope::profiler {
namespace {

TEST(TensorCoreEligibility, RaggedKIsASpeedHintNotAReasonToMiss) {
  // input [32, 100] x weight [64, 100]: K = 100.
  const auto e =
      assess("aten::linear", {"float16", "float16", "float16"}, {{32, 100}, {64, 100}, {64}});
  EXPECT_TRUE(e.eligible);
  EXPECT_EQ(e.reason, "");
  EXPECT_EQ(e.speed_hint, "GEMM dimension K=100 is not a multiple of 8");
}

TEST(TensorCoreEligibility, Fp32LinearFollowsTheMatmulTf32Setting) {
  const std::vector<DtypeName> fp32{"float32", "float32", "float32"};
  const std::vector<Shape> shapes{{256, 512}, {512, 512}, {512}};
  const auto strict = assess("aten::linear", fp32, shapes);  // PyTorch's default: no TF32 matmuls
  EXPECT_FALSE(strict.eligible);
  EXPECT_EQ(strict.reason, "fp32 inputs (autocast did not lower this op; TF32 is off for matmuls)");
  const auto tf32 = assess("aten::linear", fp32, shapes, Tf32Settings{true, true});
  EXPECT_TRUE(tf32.eligible);
  EXPECT_EQ(tf32.reason, "");
}

TEST(TensorCoreEligibility, Fp32ConvIsTf32ByPyTorchsCudnnDefault) {
  const std::vector<DtypeName> fp32{"float32", "float32"};
  const std::vector<Shape> shapes{{32, 64, 56, 56}, {64, 64, 3, 3}};
  EXPECT_TRUE(assess("aten::cudnn_convolution", fp32, shapes).eligible);
  const auto off = assess("aten::cudnn_convolution", fp32, shapes, Tf32Settings{false, false});
  EXPECT_FALSE(off.eligible);
  EXPECT_NE(off.reason.find("cuDNN TF32 is off"), std::string::npos) << off.reason;
}

TEST(TensorCoreEligibility, Fp32MemoryEfficientAttentionIsEligible) {
  // fmha_cutlassF_f32 ran on the tensor pipe of an H100 (3xTF32).
  const auto e = assess("aten::_efficient_attention_forward", {"float32", "float32", "float32"},
                        {{8, 1024, 12, 64}, {8, 1024, 12, 64}, {8, 1024, 12, 64}});
  EXPECT_TRUE(e.eligible);
  EXPECT_EQ(e.reason, "");
}

TEST(TensorCoreEligibility, Bf16BigMmHasNothingToSay) {
  const auto e = assess("aten::mm", {"bfloat16", "bfloat16"}, {{4096, 4096}, {4096, 4096}});
  EXPECT_TRUE(e.eligible);
  EXPECT_EQ(e.reason, "");
  EXPECT_EQ(e.speed_hint, "");
}

TEST(TensorCoreEligibility, OtherShapesAndOps) {
  // addmm: bias first; N = 30.
  EXPECT_EQ(assess("aten::addmm", {"float16", "float16", "float16"}, {{30}, {64, 64}, {64, 30}})
                .speed_hint,
            "GEMM dimension N=30 is not a multiple of 8");
  // A ragged M is neither.
  const auto ragged_m = assess("aten::mm", {"float16", "float16"}, {{1001, 512}, {512, 512}});
  EXPECT_EQ(ragged_m.reason, "");
  EXPECT_EQ(ragged_m.speed_hint, "");
  EXPECT_EQ(assess("aten::bmm", {"c10::Half", "c10::Half"}, {{8, 16, 16}, {8, 16, 16}}).reason,
            "tiny problem (M*N*K < 2^15)");
  EXPECT_EQ(assess("aten::matmul", {"bfloat16", "bfloat16"}, {{4, 128, 64}, {64, 12}}).speed_hint,
            "GEMM dimension N=12 is not a multiple of 8");
  // First conv of an image model: 3 input channels.
  const auto conv = assess("aten::conv2d", {"float16", "float16", "float16"},
                           {{32, 3, 224, 224}, {64, 3, 7, 7}, {64}});
  EXPECT_TRUE(conv.eligible);
  EXPECT_EQ(conv.reason, "");
  EXPECT_NE(conv.speed_hint.find("C_in=3 is not a multiple of 8"), std::string::npos)
      << conv.speed_hint;
  const auto sdpa =
      assess("aten::_scaled_dot_product_flash_attention", {"bfloat16", "bfloat16", "bfloat16"},
             {{8, 12, 128, 100}, {8, 12, 128, 100}, {8, 12, 128, 100}});
  EXPECT_TRUE(sdpa.eligible);
  EXPECT_NE(sdpa.speed_hint.find("head dim E=100"), std::string::npos) << sdpa.speed_hint;
  // Not GEMM-like, or no dtype information: nothing to say.
  EXPECT_FALSE(assess("aten::relu", {"float16"}, {{1024}}).eligible);
  EXPECT_EQ(assess("aten::relu", {"float16"}, {{1024}}).reason, "");
  EXPECT_FALSE(assess("aten::mm", {}, {}).eligible);
  EXPECT_FALSE(assess("aten::mm", {"float64", "float64"}, {{64, 64}, {64, 64}}).eligible);
  EXPECT_TRUE(is_gemm_like("aten::baddbmm"));
  EXPECT_TRUE(is_gemm_like("aten::convolution_backward"));
  EXPECT_FALSE(is_gemm_like("aten::add"));
}

}  // namespace
}  // namespace ampscope::profiler
