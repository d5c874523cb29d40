#pragma once
// A small ResNet-style image classifier: a 3x3 conv stem, `layers` residual blocks at
// constant width and resolution, global average pooling and a Linear head.
#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <string>
#include <vector>

namespace ampscope::engine::models {

// conv3x3 -> BN -> ReLU; the stem, named "stem.conv" / "stem.bn".
class ConvStemImpl : public torch::nn::Module {
 public:
  ConvStemImpl(int64_t in_channels, int64_t width, const std::string& path);
  at::Tensor forward(const at::Tensor& x);

  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};

 private:
  std::string conv_scope_, bn_scope_;
};
TORCH_MODULE(ConvStem);

// relu(x + bn2(conv2(relu(bn1(conv1(x)))))): shapes are kept, so the skip is the identity.
class ResidualBlockImpl : public torch::nn::Module {
 public:
  ResidualBlockImpl(int64_t width, const std::string& path);
  at::Tensor forward(const at::Tensor& x);

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};

 private:
  std::string conv1_scope_, bn1_scope_, conv2_scope_, bn2_scope_;
};
TORCH_MODULE(ResidualBlock);

class ConvNetImpl : public torch::nn::Module {
 public:
  // channels_last: the 4-D weights are stored NHWC and forward() makes its input NHWC
  // (Tensor Core convolutions want that layout; cuDNN transposes NCHW on every call).
  ConvNetImpl(int64_t in_channels, int64_t layers, int64_t width, int64_t num_classes,
              bool channels_last = false);
  // [B, C, H, W] float -> [B, num_classes] logits.
  at::Tensor forward(const at::Tensor& input);

  ConvStem stem{nullptr};
  std::vector<ResidualBlock> blocks;  // registered as "blocks.<i>"
  torch::nn::Linear head{nullptr};

 private:
  int64_t in_channels_;
  bool channels_last_;
  std::string stem_scope_, head_scope_;
  std::vector<std::string> block_scopes_;
};

}  // namespace ampscope::engine::models
