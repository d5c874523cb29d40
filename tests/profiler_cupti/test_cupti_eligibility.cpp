// Op-level Tensor Core eligibility from op name, dtypes and shapes.
#include <gtest/gtest.h>

#include "profiler/cupti/tensor_core_eligibility.h"

namespace ampscope::profiler::cupti {
namespace {

TEST(TensorCoreEligibility, LinearWithRaggedK) {
  // input [32, 100] x weight [64, 100]: K = 100.
  const auto e =
      assess("aten::linear", {"float16", "float16", "float16"}, {{32, 100}, {64, 100}, {64}});
  EXPECT_TRUE(e.eligible);
  EXPECT_EQ(e.reason, "GEMM dimension K=100 is not a multiple of 8");
}

TEST(TensorCoreEligibility, Fp32LinearIsNotEligible) {
  const auto e =
      assess("aten::linear", {"float32", "float32", "float32"}, {{256, 512}, {512, 512}, {512}});
  EXPECT_FALSE(e.eligible);
  EXPECT_NE(e.reason.find("fp32"), std::string::npos);
  EXPECT_EQ(e.reason, "fp32 inputs (autocast did not lower this op)");
}

TEST(TensorCoreEligibility, Bf16BigMmHasNoReason) {
  const auto e = assess("aten::mm", {"bfloat16", "bfloat16"}, {{4096, 4096}, {4096, 4096}});
  EXPECT_TRUE(e.eligible);
  EXPECT_EQ(e.reason, "");
}

TEST(TensorCoreEligibility, OtherShapesAndOps) {
  // addmm: bias first; N = 30.
  EXPECT_EQ(
      assess("aten::addmm", {"float16", "float16", "float16"}, {{30}, {64, 64}, {64, 30}}).reason,
      "GEMM dimension N=30 is not a multiple of 8");
  // A ragged M alone is not a reason.
  EXPECT_EQ(assess("aten::mm", {"float16", "float16"}, {{1001, 512}, {512, 512}}).reason, "");
  EXPECT_EQ(assess("aten::bmm", {"c10::Half", "c10::Half"}, {{8, 16, 16}, {8, 16, 16}}).reason,
            "tiny problem (M*N*K < 2^15)");
  EXPECT_EQ(assess("aten::matmul", {"bfloat16", "bfloat16"}, {{4, 128, 64}, {64, 12}}).reason,
            "GEMM dimension N=12 is not a multiple of 8");
  // First conv of an image model: 3 input channels.
  const auto conv = assess("aten::conv2d", {"float16", "float16", "float16"},
                           {{32, 3, 224, 224}, {64, 3, 7, 7}, {64}});
  EXPECT_TRUE(conv.eligible);
  EXPECT_NE(conv.reason.find("C_in=3 is not a multiple of 8"), std::string::npos) << conv.reason;
  EXPECT_EQ(
      assess("aten::cudnn_convolution", {"float16", "float16"}, {{32, 64, 56, 56}, {64, 64, 3, 3}})
          .reason,
      "");
  const auto sdpa =
      assess("aten::_scaled_dot_product_flash_attention", {"bfloat16", "bfloat16", "bfloat16"},
             {{8, 12, 128, 100}, {8, 12, 128, 100}, {8, 12, 128, 100}});
  EXPECT_TRUE(sdpa.eligible);
  EXPECT_NE(sdpa.reason.find("head dim E=100"), std::string::npos) << sdpa.reason;
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
}  // namespace ampscope::profiler::cupti
