// The built-in models: shapes, parameter names and counts, the errors a user sees when a
// model does not fit the data, autocast, causality, module scopes and gradients.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "tests/models/model_errors.h"
#include "engine/models/gpt.h"
#include "engine/models/model.h"
#include "engine/module_scope.h"

namespace ampscope::engine {
namespace {

ModelConfig config_of(ModelKind kind, int64_t layers, int64_t width) {
  ModelConfig c;
  c.kind = kind;
  c.layers = layers;
  c.width = width;
  return c;
}

SampleSpec vectors(int64_t features, int64_t classes) {
  return {TaskKind::kClassification, {features}, classes, 0};
}
SampleSpec images(int64_t c, int64_t h, int64_t w, int64_t classes) {
  return {TaskKind::kClassification, {c, h, w}, classes, 0};
}
SampleSpec tokens(int64_t t, int64_t vocab) { return {TaskKind::kLanguageModel, {t}, vocab, 0}; }

ModelConfig gpt_config(int64_t layers, int64_t width, int64_t heads, int64_t seq_len, bool tied) {
  ModelConfig c = config_of(ModelKind::kGPT, layers, width);
  c.heads = heads;
  c.seq_len = seq_len;
  c.tied_head = tied;
  return c;
}


#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

std::vector<std::string> names_of(Model& m) {
  std::vector<std::string> names;
  for (const auto& [name, t] : m.named_parameters()) names.push_back(name);
  return names;
}

bool has_name(Model& m, const std::string& name) {
  auto names = names_of(m);
  return std::find(names.begin(), names.end(), name) != names.end();
}

at::Tensor random_tokens(int64_t b, int64_t t, int64_t vocab) {
  return at::randint(vocab, {b, t}, at::TensorOptions().dtype(at::kLong));
}

// Turns CPU autocast to bf16 on for a scope and restores what was there.
class CpuAutocastBf16 {
 public:
  CpuAutocastBf16()
      : was_enabled_(at::autocast::is_autocast_enabled(at::kCPU)),
        old_dtype_(at::autocast::get_autocast_dtype(at::kCPU)) {
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCPU, true);
  }
  ~CpuAutocastBf16() {
    at::autocast::set_autocast_enabled(at::kCPU, was_enabled_);
    at::autocast::set_autocast_dtype(at::kCPU, old_dtype_);
    at::autocast::clear_cache();
  }

 private:
  bool was_enabled_;
  at::ScalarType old_dtype_;
};

// One backward pass; every trainable parameter must get a defined, finite gradient.
void expect_finite_gradients(Model& model, const at::Tensor& input) {
  model.set_training(true);
  at::Tensor out = model.forward(input);
  out.to(at::kFloat).square().mean().backward();
  for (const auto& [name, p] : model.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name << " got no gradient";
    EXPECT_TRUE(at::isfinite(p.grad()).all().item<bool>()) << name;
  }
}

// ---- MLP ----

TEST(Mlp, ShapesForVectorsImagesAndRegression) {
  auto mlp = make_model(config_of(ModelKind::kMLP, 2, 16), vectors(10, 4));
  EXPECT_EQ(mlp->forward(at::randn({3, 10})).sizes(), (std::vector<int64_t>{3, 4}));

  auto on_images = make_model(config_of(ModelKind::kMLP, 1, 8), images(1, 28, 28, 10));
  EXPECT_EQ(on_images->forward(at::randn({5, 1, 28, 28})).sizes(), (std::vector<int64_t>{5, 10}));

  SampleSpec regression{TaskKind::kRegression, {7}, 0, 3};
  auto reg = make_model(config_of(ModelKind::kMLP, 0, 8), regression);
  EXPECT_EQ(reg->forward(at::randn({2, 7})).sizes(), (std::vector<int64_t>{2, 3}));
}

TEST(Mlp, ParameterNamesAndCount) {
  auto mlp = make_model(config_of(ModelKind::kMLP, 2, 16), vectors(10, 4));
  EXPECT_EQ(names_of(*mlp),
            (std::vector<std::string>{"hidden.0.weight", "hidden.0.bias", "hidden.1.weight",
                                      "hidden.1.bias", "head.weight", "head.bias"}));
  EXPECT_EQ(mlp->parameter_count(), (10 * 16 + 16) + (16 * 16 + 16) + (16 * 4 + 4));
  EXPECT_EQ(mlp->parameters().size(), 6u);
  EXPECT_CONTAINS(mlp->description(), "MLP");
}

TEST(Mlp, RejectsTokenSequences) {
  const std::string msg =
      model_error([] { make_model(config_of(ModelKind::kMLP, 2, 16), tokens(8, 32)); });
  EXPECT_EQ(
      msg,
      "the MLP needs vector or image samples; the data gives token sequences: use --model gpt");
}

TEST(Mlp, RejectsInputOfTheWrongSize) {
  auto mlp = make_model(config_of(ModelKind::kMLP, 1, 8), vectors(10, 4));
  EXPECT_CONTAINS(model_error([&] { mlp->forward(at::randn({3, 11})); }), "10 features");
}

TEST(Mlp, AutocastBf16GivesBf16Logits) {
  auto mlp = make_model(config_of(ModelKind::kMLP, 2, 16), vectors(10, 4));
  CpuAutocastBf16 autocast;
  at::Tensor out = mlp->forward(at::randn({3, 10}));
  EXPECT_EQ(out.scalar_type(), at::kBFloat16);
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{3, 4}));
}

TEST(Mlp, GradientsAreFinite) {
  auto mlp = make_model(config_of(ModelKind::kMLP, 2, 16), vectors(10, 4));
  expect_finite_gradients(*mlp, at::randn({4, 10}));
}

// ---- ConvNet ----

TEST(ConvNet, ShapesForAnyChannelsAndSize) {
  auto rgb = make_model(config_of(ModelKind::kConvNet, 2, 8), images(3, 32, 32, 10));
  EXPECT_EQ(rgb->forward(at::randn({2, 3, 32, 32})).sizes(), (std::vector<int64_t>{2, 10}));
  auto gray = make_model(config_of(ModelKind::kConvNet, 1, 4), images(1, 4, 6, 3));
  EXPECT_EQ(gray->forward(at::randn({2, 1, 4, 6})).sizes(), (std::vector<int64_t>{2, 3}));
}

TEST(ConvNet, ParameterNamesAndCount) {
  const int64_t c = 3, w = 8, k = 10, layers = 2;
  auto net = make_model(config_of(ModelKind::kConvNet, layers, w), images(c, 16, 16, k));
  auto names = names_of(*net);
  EXPECT_EQ(names.front(), "stem.conv.weight");
  EXPECT_TRUE(has_name(*net, "stem.bn.weight"));
  EXPECT_TRUE(has_name(*net, "blocks.1.conv2.weight"));
  EXPECT_TRUE(has_name(*net, "blocks.1.bn2.bias"));
  EXPECT_FALSE(has_name(*net, "blocks.0.conv1.bias"));  // BN follows: convs have no bias
  EXPECT_EQ(names.back(), "head.bias");
  const int64_t expected = (c * w * 9 + 2 * w) + layers * (2 * w * w * 9 + 4 * w) + (w * k + k);
  EXPECT_EQ(net->parameter_count(), expected);
}

// channels_last keeps the 4-D weights NHWC (also after a move) and computes what NCHW computes.
TEST(ConvNet, ChannelsLastMatchesContiguous) {
  auto build = [](bool channels_last) {
    ModelConfig c = config_of(ModelKind::kConvNet, 2, 8);
    c.channels_last = channels_last;
    at::manual_seed(3);
    return make_model(c, images(3, 8, 8, 10));
  };
  auto nhwc = build(true), nchw = build(false);
  nhwc->to(c10::kCPU);
  EXPECT_CONTAINS(nhwc->description(), "channels_last");
  int conv_weights = 0;
  for (const auto& [name, p] : nhwc->named_parameters()) {
    if (p.dim() != 4) continue;
    ++conv_weights;
    EXPECT_TRUE(p.is_contiguous(at::MemoryFormat::ChannelsLast)) << name;
    EXPECT_FALSE(p.is_contiguous()) << name;
  }
  EXPECT_EQ(conv_weights, 5);
  const at::Tensor input = at::randn({4, 3, 8, 8});
  const at::Tensor a = nhwc->forward(input), b = nchw->forward(input);
  EXPECT_TRUE(at::allclose(a, b, 1e-5, 1e-5)) << (a - b).abs().max().item<double>();
  a.sum().backward();
  b.sum().backward();
  const auto pa = nhwc->named_parameters(), pb = nchw->named_parameters();
  for (size_t i = 0; i < pa.size(); ++i)
    EXPECT_TRUE(at::allclose(pa[i].second.grad(), pb[i].second.grad(), 1e-4, 1e-5)) << pa[i].first;
}

TEST(ConvNet, RejectsNonImagesSayingWhatItGotAndNeeds) {
  const std::string msg =
      model_error([] { make_model(config_of(ModelKind::kConvNet, 1, 8), vectors(16, 4)); });
  EXPECT_CONTAINS(msg, "{16}");
  EXPECT_CONTAINS(msg, "{C, H, W}");
  EXPECT_CONTAINS(
      model_error([] { make_model(config_of(ModelKind::kConvNet, 1, 8), images(1, 2, 8, 4)); }),
      "1x2x8");
}

TEST(ConvNet, AutocastBf16RunsAndGradientsAreFinite) {
  auto net = make_model(config_of(ModelKind::kConvNet, 1, 4), images(2, 8, 8, 5));
  {
    CpuAutocastBf16 autocast;
    EXPECT_EQ(net->forward(at::randn({2, 2, 8, 8})).scalar_type(), at::kBFloat16);
  }
  expect_finite_gradients(*net, at::randn({4, 2, 8, 8}));
}

// ---- GPT ----

int64_t gpt_parameter_formula(int64_t vocab, int64_t t, int64_t layers, int64_t d, bool tied) {
  const int64_t block = 2 * (2 * d)            // ln1, ln2: weight + bias
                        + (d * 3 * d + 3 * d)  // attn.qkv
                        + (d * d + d)          // attn.proj
                        + (d * 4 * d + 4 * d)  // mlp.fc
                        + (4 * d * d + d);     // mlp.proj
  return vocab * d + t * d + layers * block + 2 * d + (tied ? 0 : vocab * d);
}

TEST(Gpt, OutputShape) {
  auto gpt = make_model(gpt_config(2, 16, 4, 12, true), tokens(12, 40));
  EXPECT_EQ(gpt->forward(random_tokens(3, 12, 40)).sizes(), (std::vector<int64_t>{3, 12, 40}));
  // Shorter than the context is fine.
  EXPECT_EQ(gpt->forward(random_tokens(2, 5, 40)).sizes(), (std::vector<int64_t>{2, 5, 40}));
  EXPECT_CONTAINS(gpt->description(), "GPT 2 blocks");
}

TEST(Gpt, ParameterCountMatchesFormula) {
  for (bool tied : {true, false}) {
    auto gpt = make_model(gpt_config(3, 16, 2, 10, tied), tokens(10, 50));
    EXPECT_EQ(gpt->parameter_count(), gpt_parameter_formula(50, 10, 3, 16, tied)) << tied;
  }
}

TEST(Gpt, ParameterNamesAreDottedPaths) {
  auto gpt = make_model(gpt_config(2, 16, 4, 8, false), tokens(8, 20));
  for (const char* name :
       {"tok_emb.weight", "pos_emb.weight", "blocks.0.ln1.weight", "blocks.0.attn.qkv.weight",
        "blocks.0.attn.proj.bias", "blocks.1.mlp.fc.weight", "blocks.1.mlp.proj.weight",
        "ln_f.bias", "head.weight"}) {
    EXPECT_TRUE(has_name(*gpt, name)) << name;
  }
  EXPECT_FALSE(has_name(*gpt, "head.bias"));
  EXPECT_FALSE(has_name(*gpt, "blocks.0.attn.causal_mask"));  // a buffer, not a parameter
  auto names = names_of(*gpt);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
}

TEST(Gpt, TiedHeadSharesTheEmbeddingTensorAndIsListedOnce) {
  models::GptImpl tied(20, 8, 1, 16, 4, /*tied_head=*/true);
  EXPECT_TRUE(tied.head_weight().is_same(tied.tok_emb->weight));

  auto gpt = make_model(gpt_config(1, 16, 4, 8, true), tokens(8, 20));
  EXPECT_TRUE(has_name(*gpt, "tok_emb.weight"));
  EXPECT_FALSE(has_name(*gpt, "head.weight"));

  // Token 19 never occurs in the input, so its embedding row gets a gradient only through
  // the head: non-zero when tied, zero when untied.
  at::Tensor input = at::randint(19, {2, 8}, at::TensorOptions().dtype(at::kLong));
  auto emb_grad_row = [&](Model& m) {
    m.forward(input).to(at::kFloat).logsumexp(-1).sum().backward();
    for (const auto& [name, p] : m.named_parameters()) {
      if (name == "tok_emb.weight") return p.grad()[19].abs().sum().item<double>();
    }
    ADD_FAILURE() << "no tok_emb.weight";
    return -1.0;
  };
  EXPECT_GT(emb_grad_row(*gpt), 0.0);

  auto untied = make_model(gpt_config(1, 16, 4, 8, false), tokens(8, 20));
  EXPECT_EQ(emb_grad_row(*untied), 0.0);
  at::Tensor emb, head;
  for (const auto& [name, p] : untied->named_parameters()) {
    if (name == "tok_emb.weight") emb = p;
    if (name == "head.weight") head = p;
  }
  ASSERT_TRUE(emb.defined() && head.defined());
  EXPECT_NE(emb.data_ptr(), head.data_ptr());
}

TEST(Gpt, RejectsDataAndSettingsItCannotTake) {
  EXPECT_CONTAINS(
      model_error([] { make_model(gpt_config(1, 16, 4, 8, true), images(1, 8, 8, 10)); }),
      "token sequences");
  EXPECT_CONTAINS(model_error([] { make_model(gpt_config(1, 18, 4, 8, true), tokens(8, 20)); }),
                  "multiple of its attention heads");
  EXPECT_CONTAINS(model_error([] { make_model(gpt_config(1, 16, 4, 8, true), tokens(16, 20)); }),
                  "longer than the GPT's context of 8");
  auto gpt = make_model(gpt_config(1, 16, 4, 8, true), tokens(8, 20));
  EXPECT_CONTAINS(model_error([&] { gpt->forward(random_tokens(1, 9, 20)); }),
                  "context is 8 tokens");
  EXPECT_CONTAINS(model_error([&] { gpt->forward(at::randn({1, 8})); }), "integer tokens");
}

TEST(Gpt, LaterTokensDoNotChangeEarlierLogits) {
  auto gpt = make_model(gpt_config(2, 16, 4, 8, true), tokens(8, 30));
  gpt->set_training(false);
  c10::NoGradGuard no_grad;
  at::Tensor a = random_tokens(2, 8, 30);
  at::Tensor b = a.clone();
  b.select(1, 5).add_(1).remainder_(30);
  at::Tensor la = gpt->forward(a), lb = gpt->forward(b);
  EXPECT_TRUE(at::allclose(la.slice(1, 0, 5), lb.slice(1, 0, 5), 1e-6, 1e-6));
  EXPECT_FALSE(at::allclose(la.slice(1, 5), lb.slice(1, 5), 1e-6, 1e-6));  // the change is seen
}

TEST(Gpt, AutocastBf16GivesBf16Logits) {
  auto gpt = make_model(gpt_config(2, 16, 4, 8, true), tokens(8, 30));
  CpuAutocastBf16 autocast;
  at::Tensor out = gpt->forward(random_tokens(2, 8, 30));
  EXPECT_EQ(out.scalar_type(), at::kBFloat16);
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{2, 8, 30}));
  EXPECT_TRUE(at::isfinite(out).all().item<bool>());
}

// The same weights give the same logits and gradients through scaled_dot_product_attention
// and through the written-out path; a shorter input than the context stays causal in both.
TEST(Gpt, SdpaAndWrittenOutAttentionAgree) {
  auto build = [](AttentionKind attention) {
    ModelConfig c = gpt_config(2, 16, 4, 8, true);
    c.attention = attention;
    at::manual_seed(7);
    return make_model(c, tokens(8, 30));
  };
  auto sdpa = build(AttentionKind::kSDPA), math = build(AttentionKind::kMath);
  EXPECT_CONTAINS(sdpa->description(), "sdpa attention");
  EXPECT_CONTAINS(math->description(), "written-out attention");
  for (int64_t t : {8, 5}) {
    const at::Tensor input = random_tokens(3, t, 30);
    const at::Tensor a = sdpa->forward(input), b = math->forward(input);
    EXPECT_TRUE(at::allclose(a, b, 1e-5, 1e-5)) << (a - b).abs().max().item<double>();
    a.logsumexp(-1).sum().backward();
    b.logsumexp(-1).sum().backward();
  }
  const auto pa = sdpa->named_parameters(), pb = math->named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i)
    EXPECT_TRUE(at::allclose(pa[i].second.grad(), pb[i].second.grad(), 1e-4, 1e-5)) << pa[i].first;
}

TEST(Gpt, GradientsAreFinite) {
  for (bool tied : {true, false}) {
    auto gpt = make_model(gpt_config(2, 16, 4, 8, tied), tokens(8, 30));
    expect_finite_gradients(*gpt, random_tokens(2, 8, 30));
  }
}

// ---- module scopes ----

thread_local std::vector<std::string>* recorded = nullptr;

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  if (recorded) recorded->push_back(std::string("+") + fn.name());
  return nullptr;
}
void on_exit(const at::RecordFunction& fn, at::ObserverContext*) {
  if (recorded) recorded->push_back(std::string("-") + fn.name());
}

// Runs `model` once and returns its module-scope events: "+path" on entry, "-path" on exit.
std::vector<std::string> scope_events(Model& model, const at::Tensor& input) {
  std::vector<std::string> events;
  recorded = &events;
  auto handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback(on_enter, on_exit).scopes({at::RecordScope::USER_SCOPE}));
  model.forward(input);
  at::removeCallback(handle);
  recorded = nullptr;
  std::vector<std::string> out;
  for (const auto& e : events) {
    const std::string path = e.substr(1);
    const std::string prefix = kModuleScopePrefix;
    if (path.rfind(prefix, 0) == 0) out.push_back(e.substr(0, 1) + path.substr(prefix.size()));
  }
  return out;
}

// Entries and exits balance, and each scope opens inside its dotted parent (or at the top).
void expect_nested(const std::vector<std::string>& events) {
  std::vector<std::string> stack;
  for (const auto& e : events) {
    const std::string path = e.substr(1);
    if (e[0] == '+') {
      if (!stack.empty()) {
        EXPECT_EQ(path.rfind(stack.back() + ".", 0), 0u) << path << " inside " << stack.back();
      }
      stack.push_back(path);
    } else {
      ASSERT_FALSE(stack.empty()) << "exit without entry: " << path;
      EXPECT_EQ(stack.back(), path);
      stack.pop_back();
    }
  }
  EXPECT_TRUE(stack.empty());
}

std::vector<std::string> entries(const std::vector<std::string>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    if (e[0] == '+') out.push_back(e.substr(1));
  }
  return out;
}

TEST(ModuleScopes, GptReportsEveryModuleInNestingOrder) {
  auto gpt = make_model(gpt_config(1, 16, 4, 8, true), tokens(8, 20));
  auto events = scope_events(*gpt, random_tokens(1, 8, 20));
  expect_nested(events);
  EXPECT_EQ(entries(events),
            (std::vector<std::string>{"tok_emb", "pos_emb", "blocks.0", "blocks.0.ln1",
                                      "blocks.0.attn", "blocks.0.attn.qkv", "blocks.0.attn.proj",
                                      "blocks.0.ln2", "blocks.0.mlp", "blocks.0.mlp.fc",
                                      "blocks.0.mlp.proj", "ln_f", "head"}));
  // Scope names match parameter names, so the GUI can tie an op to its weights.
  for (const auto& path : entries(events)) {
    if (path == "blocks.0" || path == "blocks.0.attn" || path == "blocks.0.mlp") continue;
    const std::string weight = path == "head" ? "tok_emb.weight" : path + ".weight";
    EXPECT_TRUE(has_name(*gpt, weight)) << weight;
  }
}

TEST(ModuleScopes, ConvNetAndMlp) {
  auto net = make_model(config_of(ModelKind::kConvNet, 1, 4), images(1, 8, 8, 3));
  auto events = scope_events(*net, at::randn({2, 1, 8, 8}));
  expect_nested(events);
  EXPECT_EQ(entries(events),
            (std::vector<std::string>{"stem", "stem.conv", "stem.bn", "blocks.0", "blocks.0.conv1",
                                      "blocks.0.bn1", "blocks.0.conv2", "blocks.0.bn2", "head"}));

  auto mlp = make_model(config_of(ModelKind::kMLP, 2, 8), vectors(5, 3));
  events = scope_events(*mlp, at::randn({2, 5}));
  expect_nested(events);
  EXPECT_EQ(entries(events), (std::vector<std::string>{"hidden.0", "hidden.1", "head"}));
}

TEST(ModuleScopes, NoEventsWithoutAnObserver) {
  // The scope must be free of side effects: a forward without callbacks still works and
  // leaves nothing registered behind from the tests above.
  auto gpt = make_model(gpt_config(1, 16, 4, 8, true), tokens(8, 20));
  EXPECT_FALSE(at::hasThreadLocalCallbacks());
  EXPECT_EQ(gpt->forward(random_tokens(1, 8, 20)).size(2), 20);
}

}  // namespace
}  // namespace ampscope::engine
