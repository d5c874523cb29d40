#include "engine/models/convnet.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/errors.h"
#include "engine/models/nn_model.h"
#include "engine/module_scope.h"

namespace ampscope::engine::models {
namespace {

// Bias-free: the BatchNorm after each conv has its own shift, a conv bias would be redundant.
torch::nn::Conv2d conv3x3(int64_t in, int64_t out) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1).bias(false));
}

}  // namespace

ConvStemImpl::ConvStemImpl(int64_t in_channels, int64_t width, const std::string& path)
    : conv_scope_(scope_name(child_path(path, "conv"))),
      bn_scope_(scope_name(child_path(path, "bn"))) {
  conv = register_module("conv", conv3x3(in_channels, width));
  bn = register_module("bn", torch::nn::BatchNorm2d(width));
}

at::Tensor ConvStemImpl::forward(const at::Tensor& x) {
  at::Tensor y;
  {
    ModuleScope scope(conv_scope_);
    y = scope.output(conv->forward(scope.layer_input(scope.input(x), conv->weight)));
  }
  {
    ModuleScope scope(bn_scope_);
    y = scope.output(bn->forward(scope.input(y)));
  }
  return at::relu(y);
}

ResidualBlockImpl::ResidualBlockImpl(int64_t width, const std::string& path)
    : conv1_scope_(scope_name(child_path(path, "conv1"))),
      bn1_scope_(scope_name(child_path(path, "bn1"))),
      conv2_scope_(scope_name(child_path(path, "conv2"))),
      bn2_scope_(scope_name(child_path(path, "bn2"))) {
  conv1 = register_module("conv1", conv3x3(width, width));
  bn1 = register_module("bn1", torch::nn::BatchNorm2d(width));
  conv2 = register_module("conv2", conv3x3(width, width));
  bn2 = register_module("bn2", torch::nn::BatchNorm2d(width));
}

at::Tensor ResidualBlockImpl::forward(const at::Tensor& x) {
  at::Tensor y;
  {
    ModuleScope scope(conv1_scope_);
    y = scope.output(conv1->forward(scope.layer_input(scope.input(x), conv1->weight)));
  }
  {
    ModuleScope scope(bn1_scope_);
    y = scope.output(bn1->forward(scope.input(y)));
  }
  y = at::relu(y);  // the block's, as F.relu in its forward: bn1's output is the normalized one
  {
    ModuleScope scope(conv2_scope_);
    y = scope.output(conv2->forward(scope.layer_input(scope.input(y), conv2->weight)));
  }
  {
    ModuleScope scope(bn2_scope_);
    y = scope.output(bn2->forward(scope.input(y)));
  }
  return at::relu(x + y);
}

ConvNetImpl::ConvNetImpl(int64_t in_channels, int64_t layers, int64_t width, int64_t num_classes,
                         bool channels_last)
    : in_channels_(in_channels), channels_last_(channels_last), stem_scope_(scope_name("stem")), head_scope_(scope_name("head")) {
  stem = register_module("stem", ConvStem(in_channels, width, "stem"));
  // Registered through a ModuleList so the names read "blocks.<i>.conv1.weight", as in PyTorch.
  auto list = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < layers; ++i) {
    const std::string path = fmt::format("blocks.{}", i);
    blocks.push_back(ResidualBlock(width, path));
    list->push_back(blocks.back());
    block_scopes_.push_back(scope_name(path));
  }
  head = register_module("head", torch::nn::Linear(width, num_classes));
  if (channels_last_) {
    // As Python's module.to(memory_format=torch.channels_last): every 4-D parameter. Module::to
    // (device) later keeps the layout (Tensor::to preserves the memory format).
    c10::NoGradGuard no_grad;
    for (auto& p : parameters())
      if (p.dim() == 4) p.set_data(p.data().contiguous(at::MemoryFormat::ChannelsLast));
  }
}

at::Tensor ConvNetImpl::forward(const at::Tensor& input) {
  if (input.dim() != 4 || input.size(1) != in_channels_) {
    throw ModelError(fmt::format("the ConvNet expects [B, {}, H, W] images, got [{}]", in_channels_,
                                 fmt::join(input.sizes(), ", ")));
  }
  // A copy into NHWC (aten::contiguous) when the batch comes NCHW, as the data readers give it.
  at::Tensor x = channels_last_ ? input.contiguous(at::MemoryFormat::ChannelsLast) : input;
  {
    ModuleScope scope(stem_scope_);
    x = scope.output(stem->forward(scope.input(x)));
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    ModuleScope scope(block_scopes_[i]);
    x = scope.output(blocks[i]->forward(scope.input(x)));
  }
  x = x.mean({2, 3});  // global average pool: [B, width, H, W] -> [B, width]
  ModuleScope scope(head_scope_);
  return scope.output(apply_linear(scope, *head, scope.input(x)));
}

std::unique_ptr<Model> make_convnet(const ModelConfig& config, const SampleSpec& spec) {
  if (spec.input_shape.size() != 3) {
    throw ModelError(fmt::format(
        "the ConvNet needs image samples of shape {{C, H, W}}; the data gives {{{}}}{}: use "
        "--model mlp or gpt",
        fmt::join(spec.input_shape, ", "),
        spec.task == TaskKind::kLanguageModel ? " (token sequences)" : ""));
  }
  if (spec.task != TaskKind::kClassification) {
    throw ModelError("the ConvNet is a classifier; the data is not a classification task");
  }
  const int64_t c = spec.input_shape[0], h = spec.input_shape[1], w = spec.input_shape[2];
  if (c <= 0 || h < 4 || w < 4) {
    throw ModelError(fmt::format(
        "the ConvNet needs images of at least 1x4x4 (C x H x W); the data gives {}x{}x{}", c, h,
        w));
  }
  if (spec.num_classes <= 0) {
    throw ModelError(
        fmt::format("the ConvNet needs at least one class, the data gives {}", spec.num_classes));
  }
  auto module = std::make_shared<ConvNetImpl>(c, config.layers, config.width, spec.num_classes,
                                              config.channels_last);
  return std::make_unique<NnModel<ConvNetImpl>>(module, [&](int64_t params) {
    return fmt::format("ConvNet {}x{}x{}, {} residual blocks, {} channels, {} classes{} ({} params)",
                       c, h, w, config.layers, config.width, spec.num_classes,
                       config.channels_last ? ", channels_last" : "", format_count(params));
  });
}

}  // namespace ampscope::engine::models
