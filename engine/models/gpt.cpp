#include "engine/models/gpt.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <functional>
#include <limits>

#include "engine/errors.h"
#include "engine/models/nn_model.h"
#include "engine/module_scope.h"

namespace ampscope::engine::models {
namespace {

torch::nn::LayerNorm layer_norm(int64_t width) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({width}));
}

}  // namespace

CausalSelfAttentionImpl::CausalSelfAttentionImpl(int64_t width, int64_t heads, int64_t seq_len,
                                                 AttentionKind kind, const std::string& path)
    : heads_(heads),
      kind_(kind),
      qkv_scope_(scope_name(child_path(path, "qkv"))),
      proj_scope_(scope_name(child_path(path, "proj"))) {
  qkv = register_module("qkv", torch::nn::Linear(width, 3 * width));
  proj = register_module("proj", torch::nn::Linear(width, width));
  causal_mask = register_buffer(
      "causal_mask", at::ones({seq_len, seq_len}, at::TensorOptions().dtype(at::kBool)).triu(1));
}

at::Tensor CausalSelfAttentionImpl::forward(const at::Tensor& x) {
  const int64_t b = x.size(0), t = x.size(1), c = x.size(2), hd = c / heads_;
  at::Tensor qkv_out;
  {
    ModuleScope scope(qkv_scope_);
    qkv_out = scope.output(apply_linear(scope, *qkv, scope.input(x)));
  }
  auto parts = qkv_out.split(c, /*dim=*/2);
  // [B, T, C] -> [B, heads, T, head_dim]
  auto to_heads = [&](const at::Tensor& p) { return p.view({b, t, heads_, hd}).transpose(1, 2); };
  at::Tensor q = to_heads(parts[0]), k = to_heads(parts[1]), v = to_heads(parts[2]);
  if (kind_ == AttentionKind::kSDPA) {
    // is_causal masks as causal_mask does (q and k have the same length), with no mask tensor.
    at::Tensor y = at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0,
                                                    /*is_causal=*/true)
                       .transpose(1, 2)
                       .reshape({b, t, c});
    ModuleScope scope(proj_scope_);
    return apply_linear(scope, *proj, scope.input(y));
  }
  at::Tensor att = at::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(hd)));
  att = att.masked_fill(causal_mask.slice(0, 0, t).slice(1, 0, t),
                        -std::numeric_limits<double>::infinity());
  att = at::softmax(att, -1);
  at::Tensor y = at::matmul(att, v).transpose(1, 2).reshape({b, t, c});
  ModuleScope scope(proj_scope_);
  return scope.output(apply_linear(scope, *proj, scope.input(y)));
}

GptMlpImpl::GptMlpImpl(int64_t width, const std::string& path)
    : fc_scope_(scope_name(child_path(path, "fc"))),
      proj_scope_(scope_name(child_path(path, "proj"))) {
  fc = register_module("fc", torch::nn::Linear(width, 4 * width));
  proj = register_module("proj", torch::nn::Linear(4 * width, width));
}

at::Tensor GptMlpImpl::forward(const at::Tensor& x) {
  at::Tensor h;
  {
    ModuleScope scope(fc_scope_);
    h = scope.output(apply_linear(scope, *fc, scope.input(x)));
  }
  // The activation is the MLP's own op (F.gelu in its forward), not the Linear's: fc's
  // output, whose range the activation statistics report, is the pre-activation.
  h = at::gelu(h);
  ModuleScope scope(proj_scope_);
  return scope.output(apply_linear(scope, *proj, scope.input(h)));
}

GptBlockImpl::GptBlockImpl(int64_t width, int64_t heads, int64_t seq_len, AttentionKind attention,
                           const std::string& path)
    : ln1_scope_(scope_name(child_path(path, "ln1"))),
      attn_scope_(scope_name(child_path(path, "attn"))),
      ln2_scope_(scope_name(child_path(path, "ln2"))),
      mlp_scope_(scope_name(child_path(path, "mlp"))) {
  ln1 = register_module("ln1", layer_norm(width));
  attn = register_module(
      "attn", CausalSelfAttention(width, heads, seq_len, attention, child_path(path, "attn")));
  ln2 = register_module("ln2", layer_norm(width));
  mlp = register_module("mlp", GptMlp(width, child_path(path, "mlp")));
}

at::Tensor GptBlockImpl::forward(const at::Tensor& x) {
  // The residual adds are the block's own ops (its scope is GptImpl's), as in GPT-2's and
  // nanoGPT's Block.forward: attn's and mlp's outputs are their own, not the residual stream.
  at::Tensor h;
  {
    ModuleScope scope(ln1_scope_);
    h = scope.output(ln1->forward(scope.input(x)));
  }
  at::Tensor a;
  {
    ModuleScope scope(attn_scope_);
    a = scope.output(attn->forward(scope.input(h)));
  }
  const at::Tensor y = x + a;
  {
    ModuleScope scope(ln2_scope_);
    h = scope.output(ln2->forward(scope.input(y)));
  }
  at::Tensor m;
  {
    ModuleScope scope(mlp_scope_);
    m = scope.output(mlp->forward(scope.input(h)));
  }
  return y + m;
}

GptImpl::GptImpl(int64_t vocab, int64_t seq_len, int64_t layers, int64_t width, int64_t heads,
                 bool tied_head, AttentionKind attention)
    : seq_len_(seq_len),
      tok_scope_(scope_name("tok_emb")),
      pos_scope_(scope_name("pos_emb")),
      ln_f_scope_(scope_name("ln_f")),
      head_scope_(scope_name("head")) {
  tok_emb = register_module("tok_emb", torch::nn::Embedding(vocab, width));
  pos_emb = register_module("pos_emb", torch::nn::Embedding(seq_len, width));
  auto list = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < layers; ++i) {
    const std::string path = fmt::format("blocks.{}", i);
    blocks.push_back(GptBlock(width, heads, seq_len, attention, path));
    list->push_back(blocks.back());
    block_scopes_.push_back(scope_name(path));
  }
  ln_f = register_module("ln_f", layer_norm(width));
  if (tied_head) {
    head_weight_ = tok_emb->weight;  // the same tensor, so both uses accumulate into one grad
  } else {
    head = register_module("head",
                           torch::nn::Linear(torch::nn::LinearOptions(width, vocab).bias(false)));
    head_weight_ = head->weight;
  }

  // GPT-2's initialisation: N(0, 0.02) weights and zero biases, with the projections into the
  // residual stream scaled by 1/sqrt(2*layers) so its variance does not grow with depth. The
  // defaults (N(0, 1) embeddings) would give a tied head logits of size ~sqrt(width).
  c10::NoGradGuard no_grad;
  const double residual_std =
      0.02 / std::sqrt(2.0 * static_cast<double>(std::max<int64_t>(layers, 1)));
  // named_modules() needs shared_from_this(), which a constructor cannot call: walk children.
  std::function<void(const torch::nn::Module&)> init = [&](const torch::nn::Module& parent) {
    for (const auto& item : parent.named_children()) {
      if (auto* linear = item.value()->as<torch::nn::Linear>()) {
        linear->weight.normal_(0.0, item.key() == "proj" ? residual_std : 0.02);
        if (linear->bias.defined()) linear->bias.zero_();
      } else if (auto* embedding = item.value()->as<torch::nn::Embedding>()) {
        embedding->weight.normal_(0.0, 0.02);
      }
      init(*item.value());
    }
  };
  init(*this);
}

at::Tensor GptImpl::forward(const at::Tensor& tokens) {
  if (tokens.dim() != 2 || !at::isIntegralType(tokens.scalar_type(), /*includeBool=*/false)) {
    throw ModelError(fmt::format("the GPT expects integer tokens [B, T], got {} [{}]",
                                 c10::toString(tokens.scalar_type()),
                                 fmt::join(tokens.sizes(), ", ")));
  }
  const int64_t t = tokens.size(1);
  if (t > seq_len_) {
    throw ModelError(
        fmt::format("the GPT's context is {} tokens (--seq-len); the input has {}", seq_len_, t));
  }
  at::Tensor x;
  {
    ModuleScope scope(tok_scope_);
    x = scope.output(tok_emb->forward(tokens));
  }
  {
    ModuleScope scope(pos_scope_);
    x = scope.output(scope.input(x) + pos_emb->forward(at::arange(t, tokens.options().dtype(at::kLong))));  // [T, C] broadcast
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    ModuleScope scope(block_scopes_[i]);
    x = scope.output(blocks[i]->forward(scope.input(x)));
  }
  {
    ModuleScope scope(ln_f_scope_);
    x = scope.output(ln_f->forward(scope.input(x)));
  }
  ModuleScope scope(head_scope_);
  return scope.output(at::linear(scope.layer_input(scope.input(x), head_weight_), head_weight_));
}

std::unique_ptr<Model> make_gpt(const ModelConfig& config, const SampleSpec& spec) {
  if (spec.task != TaskKind::kLanguageModel) {
    throw ModelError(fmt::format(
        "the GPT needs token sequences (a language-model task); the data gives {} samples of "
        "shape {{{}}}: use --model mlp or convnet",
        spec.task == TaskKind::kRegression ? "regression" : "classification",
        fmt::join(spec.input_shape, ", ")));
  }
  if (config.heads <= 0 || config.width % config.heads != 0) {
    throw ModelError(
        fmt::format("the GPT's width ({}) must be a positive multiple of its attention heads ({})",
                    config.width, config.heads));
  }
  if (config.seq_len <= 0) {
    throw ModelError(fmt::format("the GPT's seq_len must be > 0, got {}", config.seq_len));
  }
  if (spec.num_classes <= 0) {
    throw ModelError(
        fmt::format("the GPT needs a vocabulary; the data gives {} token kinds", spec.num_classes));
  }
  if (spec.input_shape.size() == 1 && spec.input_shape[0] > config.seq_len) {
    throw ModelError(fmt::format(
        "the data gives sequences of {} tokens, longer than the GPT's context of {} (--seq-len)",
        spec.input_shape[0], config.seq_len));
  }
  auto module = std::make_shared<GptImpl>(spec.num_classes, config.seq_len, config.layers,
                                          config.width, config.heads, config.tied_head,
                                          config.attention);
  return std::make_unique<NnModel<GptImpl>>(module, [&](int64_t params) {
    return fmt::format(
        "GPT {} blocks, d={}, {} heads, T={}, vocab {}, {} head, {} attention ({} params)",
        config.layers, config.width, config.heads, config.seq_len, spec.num_classes,
        config.tied_head ? "tied" : "untied",
        config.attention == AttentionKind::kSDPA ? "sdpa" : "written-out", format_count(params));
  });
}

}  // namespace ampscope::engine::models
