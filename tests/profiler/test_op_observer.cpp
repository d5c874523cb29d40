// The op observer on real models under CPU autocast: what it records and how it
// classifies, checked against PyTorch's own profiler where Python torch is there.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "engine/autocast_guard.h"
#include "engine/module_scope.h"
#include "engine/training_run.h"
#include "profiler/capture/op_observer.h"
#include "profiler/export/chrome_trace.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_configs.h"

namespace ampscope::profiler {
namespace {

using engine::ModelKind;
using engine::Precision;

using engine::AttentionKind;

engine::TrainConfig gpt_config(Precision precision, AttentionKind attention = AttentionKind::kMath) {
  engine::TrainConfig c = test::tiny_gpt(precision, 2);
  c.model.attention = attention;
  return c;
}

std::vector<OpRecord> record_one_step(const engine::TrainConfig& config) {
  engine::TrainingRun run(config);
  OpObserver observer;
  observer.begin_step(1);
  run.step(1);
  observer.end_step();
  return observer.collect();
}

const OpRecord* find(const std::vector<OpRecord>& ops, const std::string& name, Phase phase,
                     const std::string& module = "") {
  for (const auto& op : ops)
    if (op.name == name && op.phase == phase && (module.empty() || op.module == module)) return &op;
  return nullptr;
}

class ObserverOnGpt : public ::testing::TestWithParam<Precision> {};

TEST_P(ObserverOnGpt, ClassifiesAutocastDecisions) {
  const Precision precision = GetParam();
  const std::string low = precision == Precision::kBF16 ? "bfloat16" : "float16";
  const auto ops = record_one_step(gpt_config(precision));
  ASSERT_GT(ops.size(), 50u);

  const OpRecord* qkv = find(ops, "aten::linear", Phase::kForward, "blocks.0.attn.qkv");
  ASSERT_NE(qkv, nullptr) << [&] {
    std::string seen;
    for (const auto& op : ops)
      if (op.parent_id == 0) seen += fmt::format("{} [{}] {}\n", op.name, to_string(op.phase), op.module);
    return seen;
  }();
  EXPECT_EQ(qkv->category, OpCategory::kDemoted);
  EXPECT_EQ(qkv->input_dtypes.at(1), "float32");  // the fp32 master weight
  EXPECT_EQ(qkv->output_dtypes.at(0), low);

  const OpRecord* matmul = find(ops, "aten::matmul", Phase::kForward, "blocks.0.attn");
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->output_dtypes.at(0), low);

  const OpRecord* loss = find(ops, "aten::cross_entropy_loss", Phase::kForward);
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->input_dtypes.at(0), low);
  EXPECT_EQ(loss->output_dtypes.at(0), "float32");
  EXPECT_EQ(loss->category, OpCategory::kKeptFp32);

  // Autocast's casts of the fp32 weights sit under the op they were made for.
  int64_t casts_under_linear = 0, cast_bytes = 0;
  for (const auto& op : ops) {
    if (op.category != OpCategory::kAutocastCast) continue;
    for (const auto& parent : ops)
      if (parent.id == op.parent_id && parent.name == "aten::linear") ++casts_under_linear;
    cast_bytes += op.cast_bytes;
  }
  EXPECT_GT(casts_under_linear, 0);
  EXPECT_GT(cast_bytes, 0);

  // Backward ops are attributed to the module of their forward op.
  bool backward_in_qkv = false;
  for (const auto& op : ops)
    backward_in_qkv = backward_in_qkv || (op.phase == Phase::kBackward && op.module == "blocks.0.attn.qkv");
  EXPECT_TRUE(backward_in_qkv);
  // A backward node links to the forward op that created it, never to an earlier op that only
  // shared its sequence number (zero_grad's detach_, a mask's slice: ops that create no node).
  std::map<uint64_t, const OpRecord*> by_id;
  for (const auto& op : ops) by_id[op.id] = &op;
  int64_t linked_nodes = 0;
  for (const auto& op : ops) {
    if (!op.autograd_node || op.forward_op_id == 0) continue;
    ++linked_nodes;
    const OpRecord* fwd = by_id.at(op.forward_op_id);
    // The op that made the node: a forward op, or the loss scaling's multiply (fp16: the
    // engine scales the loss in its backward phase), never a node itself.
    EXPECT_TRUE(fwd->phase == Phase::kForward || (fwd->phase == Phase::kBackward && fwd->name == "aten::mul"))
        << op.name << " -> " << fwd->name << " " << to_string(fwd->phase);
    EXPECT_FALSE(fwd->autograd_node) << op.name << " -> " << fwd->name;
    EXPECT_EQ(fwd->sequence_nr, op.sequence_nr) << op.name << " -> " << fwd->name;
    EXPECT_EQ(fwd->module, op.module) << op.name << " -> " << fwd->name;
    if (op.name == "EmbeddingBackward0") { EXPECT_EQ(fwd->name, "aten::embedding"); }
    if (op.name == "MaskedFillBackward0") { EXPECT_EQ(fwd->name, "aten::masked_fill"); }
  }
  EXPECT_GT(linked_nodes, 20);
  EXPECT_NE(find(ops, "EmbeddingBackward0", Phase::kBackward, "tok_emb"), nullptr);
  // The optimizer's ops are recorded in their phase, in no module; the loss scaler's
  // (fp16) are its own, its cast of the scale to fp64 (PyTorch's reciprocal) among them.
  int64_t optimizer_ops = 0, scaler_ops = 0, scaler_casts = 0;
  for (const auto& op : ops) {
    if (op.parent_id != 0) continue;
    const bool scalers = op.name.starts_with("aten::_amp_");
    if (scalers) {
      EXPECT_EQ(op.module, engine::kLossScalerModule) << op.name;
    }
    if (op.module == engine::kLossScalerModule) {
      ++scaler_ops;
      if (op.category == OpCategory::kExplicitCast && op.output_dtypes.at(0) == "float64") ++scaler_casts;
    }
    if (op.phase == Phase::kOptimizer && op.module.empty() && !scalers) ++optimizer_ops;
    // The trainer's report of the step (loss, norm, scale read back in fp64) is not recorded:
    // the model casts nothing, so no cast outside the scaler's is the code's.
    if (op.module != engine::kLossScalerModule) {
      EXPECT_NE(op.category, OpCategory::kExplicitCast) << op.name << " " << to_string(op.phase);
    }
  }
  EXPECT_GT(optimizer_ops, 0);
  EXPECT_EQ(scaler_ops > 0, precision == Precision::kFP16);
  EXPECT_EQ(scaler_casts, precision == Precision::kFP16 ? 1 : 0);
  // Records are well formed.
  std::set<uint64_t> ids;
  for (const auto& op : ops) {
    EXPECT_TRUE(ids.insert(op.id).second);
    EXPECT_LE(op.start_ns, op.end_ns);
    EXPECT_EQ(op.step, 1);
  }
}

// Gradient accumulation: the trainer's average of the micro-batches' losses is its report,
// not the model's work. Summed as they came (`loss_sum + loss`), it read as an fp32 add
// of the step's "other" phase, once per micro-batch after the first.
TEST_P(ObserverOnGpt, AccumulatedMicroBatchesAddNoOpOfTheTrainers) {
  engine::TrainConfig config = gpt_config(GetParam());
  config.accumulation_steps = 3;
  const auto ops = record_one_step(config);
  int64_t forward_embeddings = 0;
  for (const auto& op : ops) {
    if (op.parent_id != 0) continue;
    if (op.name == "aten::embedding" && op.phase == Phase::kForward && op.module == "tok_emb") ++forward_embeddings;
    if (op.phase == Phase::kOther) {
      EXPECT_NE(op.name, "aten::add") << "the trainer's sum of the micro-batches' losses";
    }
  }
  EXPECT_EQ(forward_embeddings, 3) << "one forward per micro-batch";
}

INSTANTIATE_TEST_SUITE_P(Precisions, ObserverOnGpt, ::testing::Values(Precision::kBF16, Precision::kFP16),
                         [](const auto& info) { return std::string(engine::to_string(info.param)); });

// The default attention is one scaled_dot_product_attention op, demoted as a whole, in the
// attention module's scope; nothing of the written-out path (softmax kept in fp32) is left.
TEST_P(ObserverOnGpt, SdpaAttentionIsOneDemotedOp) {
  const Precision precision = GetParam();
  const std::string low = precision == Precision::kBF16 ? "bfloat16" : "float16";
  const auto ops = record_one_step(gpt_config(precision, AttentionKind::kSDPA));
  const OpRecord* sdpa = find(ops, "aten::scaled_dot_product_attention", Phase::kForward, "blocks.0.attn");
  ASSERT_NE(sdpa, nullptr);
  EXPECT_EQ(sdpa->parent_id, 0u);
  EXPECT_EQ(sdpa->output_dtypes.at(0), low);
  EXPECT_EQ(find(ops, "aten::softmax", Phase::kForward), nullptr);
  EXPECT_EQ(find(ops, "aten::masked_fill", Phase::kForward), nullptr);
  bool backward_kernel = false;
  for (const auto& op : ops)
    backward_kernel = backward_kernel || (op.phase == Phase::kBackward && op.name.find("_scaled_dot_product_") != std::string::npos);
  EXPECT_TRUE(backward_kernel) << "the fused attention's backward";
}

TEST(OpObserver, Fp32RunHasNoAutocastDecisions) {
  const auto ops = record_one_step(gpt_config(Precision::kFP32));
  for (const auto& op : ops) {
    EXPECT_NE(op.category, OpCategory::kDemoted) << op.name;
    EXPECT_NE(op.category, OpCategory::kAutocastCast) << op.name;
  }
}

TEST(OpObserver, CatIsPromotedAndExplicitCastsAreExplicit) {
  OpObserver observer;
  observer.begin_step(3);
  {
    engine::AutocastGuard guard(c10::kCPU, at::kBFloat16);
    const at::Tensor low = at::linear(at::randn({2, 4}), at::randn({4, 4}));
    (void)at::cat({low, at::randn({2, 4})});
    (void)at::stack({low, at::randn({2, 4})});
  }
  (void)at::randn({3}).to(at::kHalf);
  observer.end_step();
  const auto ops = observer.collect();
  auto category_of = [&](const char* name) {
    for (const auto& op : ops)
      if (op.name == name && op.parent_id == 0) return op.category;
    ADD_FAILURE() << name << " not recorded";
    return OpCategory::kUnchanged;
  };
  EXPECT_EQ(category_of("aten::cat"), OpCategory::kPromoted);
  EXPECT_EQ(category_of("aten::stack"), OpCategory::kPromoted);
  EXPECT_EQ(category_of("aten::to"), OpCategory::kExplicitCast);
}

// Mixed bf16 and fp32 inputs with an fp32 output look like a promotion by dtypes alone. Where
// autocast's fp32 policy holds the op, autocast ran it in fp32 and would have with bf16
// inputs only: kept fp32. Its promote policy, and ATen's own type promotion, are promotions.
// The policies are PyTorch's: with bf16 inputs only, each op is run under autocast here too,
// so a list that changed upstream fails this test rather than mislabels.
TEST(OpObserver, MixedInputsOfAnFp32PolicyOpAreKeptFp32) {
  const at::Tensor low = at::randn({4, 4}).to(at::kBFloat16), full = at::randn({4, 4});
  const at::Tensor image = at::randn({1, 1, 4, 4}).to(at::kBFloat16), grid = at::zeros({1, 2, 2, 2});
  const at::Tensor index = at::arange(2), rows = at::zeros({4, 4}).to(at::kBFloat16);
  {
    engine::AutocastGuard guard(c10::kCPU, at::kBFloat16);
    // PyTorch's CPU policies, bf16 inputs only: fp32 runs in fp32, promote keeps bf16.
    EXPECT_EQ(at::mse_loss(low, low).scalar_type(), at::kFloat);
    EXPECT_EQ(at::grid_sampler(image, grid.to(at::kBFloat16), 0, 0, false).scalar_type(), at::kFloat);
    EXPECT_EQ(at::cat({low, low}).scalar_type(), at::kBFloat16);
    EXPECT_EQ(at::stack({low, low}).scalar_type(), at::kBFloat16);
    EXPECT_EQ(rows.index_copy(0, index, low.slice(0, 0, 2)).scalar_type(), at::kBFloat16);
  }
  OpObserver observer;
  observer.begin_step(1);
  {
    engine::AutocastGuard guard(c10::kCPU, at::kBFloat16);
    (void)at::mse_loss(low, full);                  // CPU fp32 policy
    (void)at::grid_sampler(image, grid, 0, 0, false);  // CPU fp32 policy (CUDA's is promote)
    (void)at::cat({low, full});                     // CPU promote policy
    (void)at::index_copy(full, 0, index, low.slice(0, 0, 2));  // CPU promote policy
    (void)at::add(low, full);                       // on no list: ATen's type promotion
  }
  observer.end_step();
  const auto ops = observer.collect();
  std::map<std::string, const OpRecord*> top;
  for (const auto& op : ops)
    if (op.parent_id == 0) top[op.name] = &op;
  for (const char* name : {"aten::mse_loss", "aten::grid_sampler", "aten::cat", "aten::index_copy", "aten::add"}) {
    ASSERT_TRUE(top.count(name)) << name;
    EXPECT_EQ(top[name]->output_dtypes.at(0), "float32") << name;
  }
  EXPECT_EQ(top["aten::mse_loss"]->category, OpCategory::kKeptFp32);
  EXPECT_EQ(top["aten::grid_sampler"]->category, OpCategory::kKeptFp32);
  EXPECT_EQ(top["aten::cat"]->category, OpCategory::kPromoted);
  EXPECT_EQ(top["aten::index_copy"]->category, OpCategory::kPromoted);
  EXPECT_EQ(top["aten::add"]->category, OpCategory::kPromoted);
}

// An out= tensor is written, not read: sum(bf16, dtype=float32, out=fp32), which the CPU's
// mean of a bf16 tensor runs inside (ResNet's average pool in a bf16 model), promoted
// nothing, where autocast was off. Still listed among the inputs, as torch.profiler lists
// them; an out= variant's mixed inputs that are read (add's) still promote.
TEST(OpObserver, AnOutArgumentTakesNoPartInPromotion) {
  const at::Tensor low = at::randn({4, 8, 3, 3}).to(at::kBFloat16);
  at::Tensor sum = at::empty({4, 8}, at::kFloat), added = at::empty({4, 8, 3, 3}, at::kFloat);
  OpObserver observer;
  observer.begin_step(1);
  (void)at::mean(low, {2, 3});
  (void)at::sum_out(sum, low, {2, 3}, false, at::kFloat);
  (void)at::add_out(added, low, at::randn({4, 8, 3, 3}));
  observer.end_step();
  int64_t sums = 0, adds = 0;
  for (const auto& op : observer.collect()) {
    if (op.name == "aten::sum") {
      ++sums;
      EXPECT_EQ(op.category, OpCategory::kUnchanged) << fmt::format("{}", op.input_dtypes);
      EXPECT_EQ(op.input_dtypes.back(), "float32") << "the out= tensor, listed";
    } else if (op.name == "aten::add") {
      ++adds;
      EXPECT_EQ(op.category, OpCategory::kPromoted) << fmt::format("{}", op.input_dtypes);
    } else {
      EXPECT_NE(op.category, OpCategory::kPromoted) << op.name << fmt::format(" {}", op.input_dtypes);
    }
  }
  EXPECT_EQ(sums, 2) << "the mean's and the script's";
  EXPECT_EQ(adds, 1);
}

// x (fp32) + y (fp16) computes in fp32; its backward hands y an fp32 gradient, which
// autograd's engine casts back to fp16. No line of the code asked for that cast: it is the
// promotion's. The backward of a cast the code did ask for stays explicit.
TEST(OpObserver, APromotedOpsGradientCastBackIsThePromotionsNotTheCodes) {
  const at::Tensor x = at::randn({4, 8}).requires_grad_(true);
  const at::Tensor y = at::randn({4, 8}).to(at::kHalf).requires_grad_(true);
  const at::Tensor w = at::randn({4, 8}).to(at::kHalf).requires_grad_(true);
  OpObserver observer;
  observer.begin_step(1);
  const at::Tensor promoted = x + y;
  const at::Tensor cast_by_code = w.to(at::kFloat) * x;
  (promoted.sum() + cast_by_code.sum()).backward();
  observer.end_step();
  const auto ops = observer.collect();
  std::map<uint64_t, const OpRecord*> by_id;
  for (const auto& op : ops) by_id[op.id] = &op;
  std::map<std::string, std::vector<std::string>> casts_back;  // category -> the node each ran under
  int64_t promoted_adds = 0;
  for (const auto& op : ops) {
    if (op.name == "aten::add" && op.category == OpCategory::kPromoted) ++promoted_adds;
    if (op.phase != Phase::kBackward || op.name != "aten::to" || op.output_dtypes.at(0) != "float16") continue;
    const OpRecord* node = by_id.count(op.parent_id) ? by_id.at(op.parent_id) : nullptr;
    while (node != nullptr && node->parent_id != 0 && !node->name.starts_with("autograd::engine")) {
      node = by_id.count(node->parent_id) ? by_id.at(node->parent_id) : nullptr;
    }
    casts_back[std::string(to_string(op.category))].push_back(node != nullptr ? node->name : "?");
  }
  EXPECT_EQ(promoted_adds, 1);
  using Names = std::vector<std::string>;
  EXPECT_EQ(casts_back["promotion_cast"], Names{"autograd::engine::evaluate_function: AddBackward0"});
  EXPECT_EQ(casts_back["explicit_cast"], Names{"autograd::engine::evaluate_function: ToCopyBackward0"});
  EXPECT_EQ(casts_back.size(), 2u) << [&] {
    std::string seen;
    for (const auto& [category, nodes] : casts_back) seen += category + " ";
    return seen;
  }();
  for (const auto& op : ops) {
    if (op.category == OpCategory::kPromotionCast) {
      EXPECT_GT(op.cast_bytes, 0);
    }
  }
}

// Math attention (SDPA's fallback, and the CPU's path under fp16) computes fp16 inputs in
// fp32: its casts, and their casts back in the backward, are its implementation's, no
// cast the code asked for. A cast the code makes, and its backward, stay explicit.
TEST(OpObserver, CastsInsideAnOpsImplementationAreNotTheCodes) {
  auto half = [](std::vector<int64_t> shape) { return at::randn(shape).to(at::kHalf).requires_grad_(true); };
  const at::Tensor q = half({1, 2, 8, 16}), k = half({1, 2, 8, 16}), v = half({1, 2, 8, 16});
  const at::Tensor x = half({4});
  OpObserver observer;
  observer.begin_step(1);
  const auto [attention, weights] = at::_scaled_dot_product_attention_math(q, k, v);
  const at::Tensor by_code = x.to(at::kFloat);
  (attention.sum().to(at::kFloat) + by_code.sum()).backward();
  observer.end_step();
  const auto ops = observer.collect();
  std::map<uint64_t, const OpRecord*> by_id;
  for (const auto& op : ops) by_id[op.id] = &op;
  int64_t casts_inside_attention = 0;
  std::vector<std::string> explicit_casts;
  for (const auto& op : ops) {
    if (op.category == OpCategory::kExplicitCast)
      explicit_casts.push_back(fmt::format("{} {}", to_string(op.phase), op.input_dtypes.at(0)));
    const auto parent = by_id.find(op.parent_id);
    const bool in_attention =
        parent != by_id.end() && parent->second->name == "aten::_scaled_dot_product_attention_math";
    if (op.name == "aten::to" && in_attention) {
      ++casts_inside_attention;
      EXPECT_EQ(op.category, OpCategory::kUnchanged);
    }
  }
  EXPECT_GE(casts_inside_attention, 3);  // q, k, v to fp32 (and the result back to fp16)
  // The attention's gradients cast back to fp16 in the backward were its casts' nodes': unchanged.
  // The code's two casts (x.to(float) and attention.sum().to(float)), and their casts back.
  // Outside any phase, autograd recorded them: the forward's.
  std::sort(explicit_casts.begin(), explicit_casts.end());
  EXPECT_EQ(explicit_casts, (std::vector<std::string>{"backward float32", "backward float32", "forward float16",
                                                       "forward float16"}))
      << fmt::format("{}", fmt::join(explicit_casts, ", "));
}

// Autocast's decisions are on the ops it acted on: those on its lists (PyTorch's dispatcher
// has an autocast kernel for them), cached weight casts included, and composites it cast
// inside. An op mixing fp32 parameters into a bf16 activation by itself (batch norm), or a
// 0-dim fp32 tensor into an fp16 one (type promotion keeps fp16), was not demoted.
TEST(OpObserver, OnlyOpsAutocastActedOnAreDemoted) {
  const at::Tensor weight = at::randn({4, 4}).requires_grad_(true);  // a parameter: autocast caches its cast
  const at::Tensor x = at::randn({2, 4}).to(at::kBFloat16);
  const at::Tensor a = at::randn({3, 4}), b = at::randn({5, 4});
  const at::Tensor activation = at::randn({2, 3, 4, 4}).to(at::kBFloat16);
  const at::Tensor gamma = at::ones({3}), beta = at::zeros({3}), mean = at::zeros({3}), var = at::ones({3});
  const at::Tensor half = at::randn({4, 4}).to(at::kHalf), zero_dim = at::scalar_tensor(0.5);
  OpObserver observer;
  observer.begin_step(1);
  {
    engine::AutocastGuard guard(c10::kCPU, at::kBFloat16);
    (void)at::linear(x, weight);  // casts the weight
    (void)at::linear(x, weight);  // takes the cached cast
    (void)at::inner(a, b);        // on no CPU list; autocast casts for the mm inside it
    (void)at::batch_norm(activation, gamma, beta, mean, var, true, 0.1, 1e-5, false);
    (void)at::mul(half, zero_dim);
  }
  observer.end_step();
  const auto ops = observer.collect();
  std::map<std::string, std::vector<const OpRecord*>> top;
  std::map<uint64_t, int> casts_under;
  for (const auto& op : ops) {
    if (op.parent_id == 0) top[op.name].push_back(&op);
    if (op.category == OpCategory::kAutocastCast) ++casts_under[op.parent_id];
  }
  ASSERT_EQ(top["aten::linear"].size(), 2u);
  for (const OpRecord* linear : top["aten::linear"]) EXPECT_EQ(linear->category, OpCategory::kDemoted);
  EXPECT_EQ(casts_under[top["aten::linear"][0]->id], 1);
  EXPECT_EQ(casts_under[top["aten::linear"][1]->id], 0);  // the cache: no cast recorded, still autocast's
  ASSERT_EQ(top["aten::inner"].size(), 1u);
  EXPECT_EQ(top["aten::inner"][0]->category, OpCategory::kDemoted);
  ASSERT_EQ(top["aten::batch_norm"].size(), 1u);
  EXPECT_EQ(top["aten::batch_norm"][0]->input_dtypes.at(1), "float32");
  EXPECT_EQ(top["aten::batch_norm"][0]->output_dtypes.at(0), "bfloat16");
  EXPECT_EQ(top["aten::batch_norm"][0]->category, OpCategory::kUnchanged);
  ASSERT_EQ(top["aten::mul"].size(), 1u);
  EXPECT_EQ(top["aten::mul"][0]->output_dtypes.at(0), "float16");
  EXPECT_EQ(top["aten::mul"][0]->category, OpCategory::kUnchanged);
}

TEST(OpObserver, UnsampledStepsRecordNothing) {
  engine::TrainingRun run(gpt_config(Precision::kBF16));
  OpObserver observer;
  run.step(1);
  observer.begin_step(2);
  run.step(2);
  observer.end_step();
  run.step(3);
  const auto ops = observer.collect();
  ASSERT_FALSE(ops.empty());
  for (const auto& op : ops) EXPECT_EQ(op.step, 2);
}

class MatchesPyTorchProfiler : public ::testing::TestWithParam<std::tuple<Precision, AttentionKind>> {};

TEST_P(MatchesPyTorchProfiler, InputDtypesOfTheSameOps) {
  auto python = test::python_with_torch();
  if (!python) GTEST_SKIP() << "no Python with torch configured (AMPSCOPE_PYTHON)";
  const auto [precision, attention] = GetParam();
  std::string out;
  const std::string cmd = fmt::format("'{}' '{}' {} {} 2>/dev/null", *python,
                                      test::test_source_path("python/profiler_dtypes_reference.py").string(),
                                      engine::to_string(precision), engine::to_string(attention));
  ASSERT_EQ(test::run_command(cmd, &out), 0) << cmd;
  const auto reference = nlohmann::json::parse(out);
  const bool sdpa = attention == AttentionKind::kSDPA;
  EXPECT_EQ(reference.contains("aten::scaled_dot_product_attention"), sdpa) << out;
  EXPECT_EQ(reference.contains("aten::softmax"), !sdpa) << out;

  const auto ops = record_one_step(gpt_config(precision, attention));
  std::map<std::string, std::set<std::vector<std::string>>> ours;
  for (const auto& op : ops) {
    if (op.phase != Phase::kForward || !reference.contains(op.name)) continue;
    std::vector<std::string> types;
    for (const auto& d : op.input_dtypes)
      if (!d.empty()) types.emplace_back(pytorch_dtype_name(d));
    ours[op.name].insert(types);
  }
  ASSERT_GE(reference.size(), 6u) << out;
  for (const auto& [name, tuples] : reference.items()) {
    std::set<std::vector<std::string>> expected;
    for (const auto& t : tuples) expected.insert(t.get<std::vector<std::string>>());
    EXPECT_EQ(ours[name], expected) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(PrecisionsAndAttention, MatchesPyTorchProfiler,
                         ::testing::Combine(::testing::Values(Precision::kBF16, Precision::kFP16),
                                            ::testing::Values(AttentionKind::kSDPA, AttentionKind::kMath)),
                         [](const auto& info) {
                           return fmt::format("{}_{}", engine::to_string(std::get<0>(info.param)),
                                              engine::to_string(std::get<1>(info.param)));
                         });

// A user's TorchScript model has no module scopes of ours: the op observer takes
// the module path from the TorchScript interpreter. Scripted (not traced) nested
// modules, a helper method on self, and a Sequential.
constexpr const char* kNestedScript = R"(
import sys, torch
class Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
    def act(self, y):
        return torch.relu(y)
    def forward(self, x):
        return self.act(self.lin(x))
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 16)
        self.blocks = torch.nn.Sequential(Inner(), Inner())
        self.out = torch.nn.Linear(16, 10)
    def forward(self, x):
        return self.out(self.blocks(torch.tanh(self.fc1(x))))
torch.jit.script(Net()).save(sys.argv[1])
)";

std::string top_level_summary(const std::vector<OpRecord>& ops) {
  std::string seen;
  for (const auto& op : ops)
    if (op.depth <= 1)
      seen += fmt::format("{}{} [{}] {} seq={}\n", op.depth ? "  " : "", op.name, to_string(op.phase), op.module,
                          op.sequence_nr);
  return seen;
}

TEST(OpObserverTorchScript, OpsCarryTheScriptedSubmodulePath) {
  auto python = test::python_with_torch();
  if (!python) GTEST_SKIP() << "no Python with torch configured (AMPSCOPE_PYTHON)";
  test::ScratchDir dir;
  test::write_file(dir / "make_model.py", kNestedScript);
  const std::string path = dir / "nested.pt";
  std::string out;
  const std::string make = fmt::format("'{}' '{}' '{}' 2>&1", *python, (dir / "make_model.py").string(), path);
  ASSERT_EQ(test::run_command(make, &out), 0) << out;

  engine::TrainConfig config;
  config.model.kind = ModelKind::kTorchScript;
  config.model.torchscript_path = path;
  config.data.synthetic_samples = 64;
  config.batch_size = 4;
  config.device = engine::DeviceChoice::kCPU;
  config.steps = 4;
  engine::TrainingRun run(config);
  const std::set<std::string> linears{"fc1", "blocks.0.lin", "blocks.1.lin", "out"};
  for (int64_t step = 1; step <= 4; ++step) {
    SCOPED_TRACE(fmt::format("step {}", step));
    OpObserver observer;
    observer.begin_step(step);
    run.step(step);
    observer.end_step();
    const auto ops = observer.collect();

    std::set<std::string> forward_linears;
    for (const auto& op : ops)
      if (op.name == "aten::linear" && op.phase == Phase::kForward) forward_linears.insert(op.module);
    EXPECT_EQ(forward_linears, linears) << top_level_summary(ops);
    // Ops inside a linear (addmm, t) are its; "SELF" (a method on the same module) adds nothing.
    for (const auto& op : ops) {
      if (op.phase != Phase::kForward) continue;
      if (op.name == "aten::addmm") { EXPECT_TRUE(linears.contains(op.module)) << op.module; }
      if (op.name == "aten::relu") { EXPECT_TRUE(op.module == "blocks.0" || op.module == "blocks.1") << op.module; }
      if (op.name == "aten::tanh" || op.name == "aten::cross_entropy_loss") { EXPECT_EQ(op.module, "") << op.name; }
    }

    // Backward. The first call runs the profiling executor's profiling pass: ops as
    // written, one autograd node each, linked to the forward op by sequence number.
    // From then on the optimized graph runs the model's differentiable part as one
    // prim::DifferentiableGraph whose forward ops run detached and whose backward is
    // one DifferentiableGraphBackward node running TorchScript's own gradient graph,
    // which carries no module call stack: its ops stay at the top module.
    std::set<std::string> backward_addmm;
    bool differentiable_graph = false;
    for (const auto& op : ops) {
      if (op.name == "AddmmBackward0") backward_addmm.insert(op.module);
      if (op.autograd_node && op.name.find("DifferentiableGraphBackward") != std::string::npos) {
        differentiable_graph = true;
        EXPECT_EQ(op.module, "");
      }
    }
    if (step == 1) { EXPECT_FALSE(differentiable_graph) << top_level_summary(ops); }
    if (!differentiable_graph) { EXPECT_EQ(backward_addmm, linears) << top_level_summary(ops); }
    if (step == 4) {
      EXPECT_TRUE(differentiable_graph) << "the optimized graph: update this test's comment" << top_level_summary(ops);
    }
  }
}

}  // namespace
}  // namespace ampscope::profiler
