#pragma once
// A GPT-style decoder-only transformer (pre-LayerNorm, learned positions). Attention is one
// scaled_dot_product_attention op by default (what fast PyTorch code runs), or written out
// with matmul/masked_fill/softmax (AttentionKind::kMath), so ampscope can show the autocast
// decision for each of those ops (the softmax autocast keeps in fp32).
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <string>
#include <vector>

#include "engine/config.h"

namespace ampscope::engine::models {

class CausalSelfAttentionImpl : public torch::nn::Module {
 public:
  CausalSelfAttentionImpl(int64_t width, int64_t heads, int64_t seq_len, AttentionKind kind,
                          const std::string& path);
  // [B, T, width] -> [B, T, width]; position t attends to positions <= t only.
  at::Tensor forward(const at::Tensor& x);

  torch::nn::Linear qkv{nullptr};   // width -> 3*width: q, k, v side by side
  torch::nn::Linear proj{nullptr};  // width -> width
  at::Tensor causal_mask;           // buffer [seq_len, seq_len] bool, true above the diagonal

 private:
  int64_t heads_;
  AttentionKind kind_;
  std::string qkv_scope_, proj_scope_;
};
TORCH_MODULE(CausalSelfAttention);

class GptMlpImpl : public torch::nn::Module {
 public:
  GptMlpImpl(int64_t width, const std::string& path);
  at::Tensor forward(const at::Tensor& x);  // Linear(width->4w), GELU, Linear(4w->width)

  torch::nn::Linear fc{nullptr}, proj{nullptr};

 private:
  std::string fc_scope_, proj_scope_;
};
TORCH_MODULE(GptMlp);

// x + attn(ln1(x)), then x + mlp(ln2(x)).
class GptBlockImpl : public torch::nn::Module {
 public:
  GptBlockImpl(int64_t width, int64_t heads, int64_t seq_len, AttentionKind attention,
               const std::string& path);
  at::Tensor forward(const at::Tensor& x);

  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  CausalSelfAttention attn{nullptr};
  GptMlp mlp{nullptr};

 private:
  std::string ln1_scope_, attn_scope_, ln2_scope_, mlp_scope_;
};
TORCH_MODULE(GptBlock);

class GptImpl : public torch::nn::Module {
 public:
  GptImpl(int64_t vocab, int64_t seq_len, int64_t layers, int64_t width, int64_t heads,
          bool tied_head, AttentionKind attention = AttentionKind::kSDPA);
  // Tokens [B, T] (int64, T <= seq_len) -> logits [B, T, vocab].
  at::Tensor forward(const at::Tensor& tokens);
  // The weight the head multiplies by: tok_emb->weight itself (same TensorImpl) when tied.
  const at::Tensor& head_weight() const { return head_weight_; }
  bool tied() const { return !head; }

  torch::nn::Embedding tok_emb{nullptr}, pos_emb{nullptr};
  std::vector<GptBlock> blocks;  // registered as "blocks.<i>"
  torch::nn::LayerNorm ln_f{nullptr};
  // Untied only ("head.weight"). A tied head registers nothing: the shared tensor is already
  // "tok_emb.weight", and registering it twice would make optimizers step it twice.
  torch::nn::Linear head{nullptr};

 private:
  int64_t seq_len_;
  at::Tensor head_weight_;
  std::string tok_scope_, pos_scope_, ln_f_scope_, head_scope_;
  std::vector<std::string> block_scopes_;
};

}  // namespace ampscope::engine::models
