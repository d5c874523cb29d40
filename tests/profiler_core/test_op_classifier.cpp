// Classification and aggregation from dtypes and op trees alone (no LibTorch ops).
#include <gtest/gtest.h>

// The cases name only the fields they set; the rest keep their defaults, as C++20's
// aggregate initialization guarantees. GCC 12 warns about it all the same.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <map>
#include <string>
#include <tuple>

#include "profiler/analysis/op_aggregator.h"
#include "profiler/analysis/op_classifier.h"
#include "profiler/analysis/warmup_step.h"
#include "profiler/session_meta_keys.h"

namespace ampscope::profiler {
namespace {

OpCategory classify(const char* name, std::vector<DtypeName> in, std::vector<DtypeName> out,
                    CastContext context = {}) {
  return classify_op(name, in, out, context);
}

TEST(OpClassifier, ReadsAutocastDecisionsFromDtypes) {
  EXPECT_EQ(classify("aten::linear", {"float32", "float32", "float32"}, {"bfloat16"}),
            OpCategory::kDemoted);
  EXPECT_EQ(classify("aten::linear", {"bfloat16", "float32", ""}, {"float16"}),
            OpCategory::kDemoted);
  EXPECT_EQ(classify("aten::cross_entropy_loss", {"bfloat16", "int64", "", "", ""}, {"float32"}),
            OpCategory::kKeptFp32);
  EXPECT_EQ(classify("aten::cat", {"bfloat16", "float32", ""}, {"float32"}), OpCategory::kPromoted);
  EXPECT_EQ(classify("aten::stack", {"float16", "bfloat16"}, {"float32"}), OpCategory::kPromoted);
  EXPECT_EQ(classify("aten::relu", {"bfloat16"}, {"bfloat16"}), OpCategory::kUnchanged);
  EXPECT_EQ(classify("aten::add", {"float32", "float32", ""}, {"float32"}), OpCategory::kUnchanged);
  EXPECT_EQ(classify("aten::embedding", {"float32", "int64"}, {"float32"}), OpCategory::kUnchanged);
  EXPECT_EQ(classify("aten::argmax", {"float16"}, {"int64"}), OpCategory::kUnchanged);
}

TEST(OpClassifier, CastsUnderAutocastAreTheCastTaxOthersAreExplicit) {
  EXPECT_EQ(
      classify("aten::to", {"float32"}, {"bfloat16"}, {.parent_entered_under_autocast = true}),
      OpCategory::kAutocastCast);
  EXPECT_EQ(classify("aten::to", {"float32"}, {"bfloat16"}, {}), OpCategory::kExplicitCast);
  // The inner steps of a cast are part of it, not casts or decisions of their own.
  EXPECT_EQ(classify("aten::_to_copy", {"float32"}, {"bfloat16"}, {.inside_cast = true}),
            OpCategory::kUnchanged);
  EXPECT_EQ(classify("aten::copy_", {"bfloat16", "float32"}, {"bfloat16"}, {.inside_cast = true}),
            OpCategory::kUnchanged);
  // A cast to the dtype it already has is no cast.
  EXPECT_EQ(classify("aten::to", {"float32"}, {"float32"}, {.parent_entered_under_autocast = true}),
            OpCategory::kUnchanged);
  // Integer and wrapped-number conversions are bookkeeping, not precision decisions.
  EXPECT_EQ(classify("aten::to", {"int64"}, {"float64"}, {}), OpCategory::kUnchanged);
  EXPECT_EQ(classify("aten::to", {"wrapped:float64"}, {"float32"}, {}), OpCategory::kUnchanged);
  // Casting the gradient back in the backward node of an autocast cast is cast tax too.
  EXPECT_EQ(classify("aten::to", {"bfloat16"}, {"float32"}, {.backward_of_autocast_cast = true}),
            OpCategory::kAutocastCast);
  // torch.compile's decomposed graphs (inductor) spell the cast as a prim; its dtype
  // argument is no tensor ("").
  EXPECT_EQ(classify("prims::convert_element_type", {"float32", ""}, {"bfloat16"},
                     {.parent_entered_under_autocast = true}),
            OpCategory::kAutocastCast);
  EXPECT_EQ(classify("prims::convert_element_type", {"bfloat16", ""}, {"float32"}, {}), OpCategory::kExplicitCast);
}

TEST(OpClassifier, AGradientCastBackInAPromotedOpsBackwardIsThePromotions) {
  EXPECT_EQ(classify("aten::to", {"float32"}, {"float16"}, {.backward_of_promotion = true}),
            OpCategory::kPromotionCast);
  // Autocast's cast decides first: a node of its cast holding a promotion is still its.
  EXPECT_EQ(classify("aten::to", {"float32"}, {"float16"},
                     {.backward_of_autocast_cast = true, .backward_of_promotion = true}),
            OpCategory::kAutocastCast);
  // The promoted op's other ops in its backward are what their dtypes say.
  EXPECT_EQ(classify("aten::mul", {"float32", "float32"}, {"float32"}, {.backward_of_promotion = true}),
            OpCategory::kUnchanged);
  EXPECT_EQ(classify("aten::to", {"float32"}, {"float32"}, {.backward_of_promotion = true}), OpCategory::kUnchanged);
}

TEST(OpClassifier, AListedOpWhereTheScriptTurnedAutocastOffIsTheScriptsChoice) {
  // custom_fwd(cast_inputs=torch.float32)'s matmul, a sensitive region under autocast(enabled=False).
  const CastContext off{.autocast_acted = false, .autocast_turned_off = true};
  EXPECT_EQ(classify("aten::mm", {"float32", "float32"}, {"float32"}, off), OpCategory::kAutocastOff);
  EXPECT_EQ(classify("aten::linear", {"float16", "float16", "float16"}, {"float16"}, off),
            OpCategory::kAutocastOff);
  // Its casts are still what the script or custom_fwd asked for, and integer ops no decision.
  EXPECT_EQ(classify("aten::to", {"float16"}, {"float32"}, off), OpCategory::kExplicitCast);
  EXPECT_EQ(classify("aten::argmax", {"float32"}, {"int64"}, off), OpCategory::kUnchanged);
  EXPECT_EQ(classify("aten::mm", {"float32", "float32"}, {"float32"}, {.autocast_acted = false}),
            OpCategory::kUnchanged);
}

// FSDP's mixed-precision policy converts inside its own scopes, by casts and by copies between
// floating dtypes (torch 2.11's fully_shard: its gather's _foreach_copy_ of fp32 shards into a
// bf16 buffer, fsdp::chunk_cat of bf16 gradients into an fp32 one, its inputs' .to()).
TEST(OpClassifier, AConversionInsideFsdpsScopesIsItsPolicys) {
  const CastContext fsdp{.in_sharding_scope = true};
  EXPECT_EQ(classify("aten::to", {"float32", "", ""}, {"bfloat16"}, fsdp), OpCategory::kShardingCast);
  EXPECT_EQ(classify("aten::_foreach_copy_", {"bfloat16", "bfloat16", "float32", "float32", ""}, {}, fsdp),
            OpCategory::kShardingCast);
  EXPECT_EQ(classify("fsdp::chunk_cat", {"bfloat16", "bfloat16", "", "", "float32"}, {}, fsdp),
            OpCategory::kShardingCast);
  // What converts nothing there is what it is; integer and wrapped numbers are no conversion.
  EXPECT_EQ(classify("aten::_foreach_copy_", {"bfloat16", "bfloat16", ""}, {}, fsdp), OpCategory::kUnchanged);
  EXPECT_EQ(classify("aten::div_", {"float32", "wrapped:float64"}, {"float32"}, fsdp), OpCategory::kUnchanged);
  EXPECT_EQ(classify("aten::copy_", {"bfloat16", "int64"}, {"bfloat16"}, fsdp), OpCategory::kUnchanged);
  // A cast's inner steps stay the cast's; outside FSDP's scopes the same ops are the code's.
  EXPECT_EQ(classify("aten::copy_", {"bfloat16", "float32"}, {"bfloat16"}, {.inside_cast = true,
                                                                            .in_sharding_scope = true}),
            OpCategory::kUnchanged);
  EXPECT_EQ(classify("aten::to", {"float32", "", ""}, {"bfloat16"}), OpCategory::kExplicitCast);
  EXPECT_EQ(classify("aten::_foreach_copy_", {"bfloat16", "float32"}, {}), OpCategory::kUnchanged);
}

// checkpoint(use_reentrant=False) stops its recomputation by raising inside the op that
// saved the last tensor the backward needs: that op has no outputs, and what autocast cast
// its inputs to says what it decided.
TEST(OpClassifier, AnOpCutShortIsDecidedByTheCastsAutocastMadeForIt) {
  const std::vector<std::string> inputs{"bfloat16", "float32", "float32"};
  EXPECT_EQ(classify("aten::linear", inputs, {}, {.autocast_acted = true, .autocast_cast_to = "bfloat16"}),
            OpCategory::kDemoted);
  EXPECT_EQ(
      classify("aten::mse_loss", {"float16", "float32"}, {}, {.autocast_acted = true, .autocast_cast_to = "float32"}),
      OpCategory::kKeptFp32);
  EXPECT_EQ(classify("aten::linear", inputs, {}, {.autocast_acted = true}), OpCategory::kUnchanged);  // nothing cast
}

TEST(OpClassifier, DemotionAndKeepingAreAutocastsWhereItActed) {
  // Where the recorder knows autocast did not act (not on its lists, nothing cast inside),
  // mixed dtypes are the op's own: batch norm's fp32 parameters on a bf16 activation.
  EXPECT_EQ(classify("aten::batch_norm", {"bfloat16", "float32", "float32"}, {"bfloat16"},
                     {.autocast_acted = false}),
            OpCategory::kUnchanged);
  EXPECT_EQ(classify("aten::sum", {"float16"}, {"float32"}, {.autocast_acted = false}), OpCategory::kUnchanged);
  EXPECT_EQ(classify("aten::linear", {"float32", "float32"}, {"bfloat16"}, {.autocast_acted = true}),
            OpCategory::kDemoted);
  EXPECT_EQ(classify("aten::softmax", {"float16"}, {"float32"}, {.autocast_acted = true}), OpCategory::kKeptFp32);
  // Unknown (dtypes alone): as they read.
  EXPECT_EQ(classify("aten::batch_norm", {"bfloat16", "float32", "float32"}, {"bfloat16"}), OpCategory::kDemoted);
  // Promotion and casts are no autocast decision: the same either way.
  EXPECT_EQ(classify("aten::add", {"float32", "float16"}, {"float32"}, {.autocast_acted = false}),
            OpCategory::kPromoted);
  EXPECT_EQ(classify("aten::to", {"float32"}, {"float16"}, {.autocast_acted = false}), OpCategory::kExplicitCast);
}

TEST(OpClassifier, MixedInputsUnderAutocastsFp32PolicyAreKeptFp32NotPromoted) {
  // mse_loss of an fp16 output and an fp32 target: autocast's fp32 list casts both to fp32.
  const CastContext fp32_policy{.autocast_acted = true, .autocast_listed_not_promote = true};
  EXPECT_EQ(classify("aten::mse_loss", {"float16", "float32"}, {"float32"}, fp32_policy), OpCategory::kKeptFp32);
  EXPECT_EQ(classify("aten::layer_norm", {"bfloat16", "", "float32", "float32"}, {"float32"}, fp32_policy),
            OpCategory::kKeptFp32);
  EXPECT_EQ(classify("aten::mse_loss", {"float16", "bfloat16"}, {"float32"}, fp32_policy), OpCategory::kKeptFp32);
  // Its promote policy (cat on the CPU), and an op on no list, promote.
  EXPECT_EQ(classify("aten::cat", {"bfloat16", "float32"}, {"float32"}, {.autocast_acted = true}),
            OpCategory::kPromoted);
  EXPECT_EQ(classify("aten::add", {"float16", "float32"}, {"float32"}, {.autocast_acted = false}),
            OpCategory::kPromoted);
  // fp32 with fp64 is no reduced precision: a promotion whatever the policy.
  EXPECT_EQ(classify("aten::mse_loss", {"float32", "float64"}, {"float64"}, fp32_policy), OpCategory::kPromoted);
  // The lower precision policy's mixed inputs are demoted as before.
  EXPECT_EQ(classify("aten::linear", {"float16", "float32"}, {"float16"}, fp32_policy), OpCategory::kDemoted);
}

TEST(OpClassifier, PromotionFollowsPyTorchsTypePromotion) {
  // fp16 with bf16 promotes to fp32, in either order and among more inputs; the same
  // 16-bit type twice is no promotion; fp32 with fp64 is (to fp64).
  EXPECT_EQ(classify("aten::add", {"bfloat16", "float16"}, {"float32"}), OpCategory::kPromoted);
  EXPECT_EQ(classify("aten::cat", {"float16", "float16", "bfloat16"}, {"float32"}), OpCategory::kPromoted);
  EXPECT_EQ(classify("aten::add", {"float16", "float16"}, {"float16"}), OpCategory::kUnchanged);
  EXPECT_EQ(classify("aten::add", {"float32", "float64"}, {"float64"}), OpCategory::kPromoted);
  // An output narrower than the widest input is no promotion (a demotion, or an op that chose).
  EXPECT_EQ(classify("aten::add", {"float32", "float16"}, {"float16"}), OpCategory::kDemoted);
  // Wrapped numbers take no part.
  EXPECT_EQ(classify("aten::mul", {"float16", "wrapped:float64"}, {"float16"}), OpCategory::kUnchanged);
}

OpRecord op(uint64_t id, uint64_t parent, const char* name, OpCategory c, int64_t start,
            int64_t end, int64_t step = 1) {
  OpRecord r;
  r.id = id;
  r.parent_id = parent;
  r.name = name;
  r.category = c;
  r.start_ns = start;
  r.end_ns = end;
  r.step = step;
  r.module = "fc";
  r.phase = Phase::kForward;
  return r;
}

KernelRecord kernel(uint64_t op_id, int64_t start, int64_t end, bool tc) {
  KernelRecord k;
  k.op_id = op_id;
  k.start_ns = start;
  k.end_ns = end;
  k.tensor_core_by_name = tc;
  return k;
}

TEST(OpAggregator, GroupsCallsAndAttributesCastTaxAndGpuTime) {
  OpAggregator agg;
  std::vector<OpRecord> ops;
  for (int step = 1; step <= 2; ++step) {
    const uint64_t base = step * 10;
    ops.push_back(op(base + 1, 0, "aten::linear", OpCategory::kDemoted, 0, 100, step));
    OpRecord cast = op(base + 2, base + 1, "aten::to", OpCategory::kAutocastCast, 10, 30, step);
    cast.cast_bytes = 2048;
    ops.push_back(cast);
    ops.push_back(op(base + 3, base + 2, "aten::_to_copy", OpCategory::kUnchanged, 12, 28, step));
    ops.push_back(op(base + 4, base + 1, "aten::addmm", OpCategory::kUnchanged, 40, 90, step));
  }
  agg.add_ops(ops);
  agg.add_kernels({kernel(13, 0, 5, false), kernel(14, 10, 60, true), kernel(24, 100, 150, true),
                   kernel(999, 0, 7, false)});
  const auto rows = agg.op_stats();
  const OpStats* linear = nullptr;
  const OpStats* addmm = nullptr;
  for (const auto& r : rows) {
    if (r.name == "aten::linear") linear = &r;
    if (r.name == "aten::addmm") addmm = &r;
  }
  ASSERT_NE(linear, nullptr);
  ASSERT_NE(addmm, nullptr);
  EXPECT_EQ(linear->calls, 2);
  EXPECT_EQ(linear->cpu_time_ns, 200);
  EXPECT_TRUE(linear->top_level);
  EXPECT_FALSE(addmm->top_level);
  EXPECT_EQ(linear->cast_calls, 2);
  EXPECT_EQ(linear->cast_bytes, 4096);
  EXPECT_EQ(linear->cast_cpu_time_ns, 40);
  EXPECT_EQ(linear->cast_gpu_time_ns, 5);       // the kernel under the cast's _to_copy
  EXPECT_EQ(linear->gpu_time_ns, 5 + 50 + 50);  // inclusive of everything under it
  EXPECT_EQ(linear->kernels, 3);
  EXPECT_EQ(linear->tensor_core_kernels, 2);
  EXPECT_EQ(addmm->gpu_time_ns, 100);
  // Op 999 has not arrived: its kernel waits for it, and is given up on only at the end.
  EXPECT_EQ(agg.unattributed_kernels(), 0);
  EXPECT_EQ(agg.parked_kernels(), 1u);
  agg.release_parked();
  EXPECT_EQ(agg.unattributed_kernels(), 1);
  EXPECT_EQ(agg.unattributed_gpu_ns(), 7);
  EXPECT_EQ(agg.take_settled().size(), 4u);  // every kernel comes out once
  // Category totals count top-level rows only.
  const auto totals = category_totals(agg.op_stats());
  ASSERT_EQ(totals.size(), 1u);  // the nested unchanged and cast rows are not counted
  EXPECT_EQ(totals[0].category, OpCategory::kDemoted);
  EXPECT_EQ(totals[0].cpu_time_ns, 200);
  EXPECT_EQ(totals[0].cast_cpu_time_ns, 40);
}

// The CPU's aten::lstm holds its layers (aten::mkldnn_rnn_layer), whose inputs autocast casts:
// the top-level lstm row's cast tax is every cast inside it, as its time is, and the layer's
// row keeps its own. The category totals and the verdict read top-level rows only.
TEST(OpAggregator, ACastAutocastMadeForANestedOpIsTheTopLevelOpsCastTaxToo) {
  OpAggregator agg;
  std::vector<OpRecord> ops;
  ops.push_back(op(1, 0, "aten::lstm", OpCategory::kDemoted, 0, 1000));
  ops.push_back(op(2, 1, "aten::mkldnn_rnn_layer", OpCategory::kDemoted, 10, 500));
  OpRecord weight_cast = op(3, 2, "aten::to", OpCategory::kAutocastCast, 20, 60);
  weight_cast.cast_bytes = 512;
  ops.push_back(weight_cast);
  ops.push_back(op(4, 3, "aten::_to_copy", OpCategory::kUnchanged, 25, 55));
  ops.push_back(op(5, 2, "aten::mkldnn_rnn_layer", OpCategory::kUnchanged, 70, 490));
  ops.push_back(op(6, 1, "aten::mkldnn_rnn_layer", OpCategory::kDemoted, 510, 990));
  OpRecord state_cast = op(7, 6, "aten::to", OpCategory::kAutocastCast, 520, 530);
  state_cast.cast_bytes = 256;
  ops.push_back(state_cast);
  agg.add_ops(ops);
  agg.add_kernels({kernel(4, 30, 50, false), kernel(5, 100, 400, false)});
  const auto rows = agg.op_stats();
  const OpStats* lstm = nullptr;
  const OpStats* layer = nullptr;  // the demoted layer: both calls share its signature
  for (const auto& r : rows) {
    if (r.name == "aten::lstm") lstm = &r;
    if (r.name == "aten::mkldnn_rnn_layer" && r.category == OpCategory::kDemoted) layer = &r;
  }
  ASSERT_NE(lstm, nullptr);
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(lstm->cast_calls, 2);
  EXPECT_EQ(lstm->cast_bytes, 768);
  EXPECT_EQ(lstm->cast_cpu_time_ns, 40 + 10);
  EXPECT_EQ(lstm->cast_gpu_time_ns, 20);  // the kernel under the weight cast, not the layer's own
  EXPECT_EQ(layer->cast_calls, 2);
  EXPECT_EQ(layer->cast_cpu_time_ns, 50);
  const auto totals = category_totals(agg.op_stats());
  ASSERT_EQ(totals.size(), 1u);
  EXPECT_EQ(totals[0].cast_cpu_time_ns, 50) << "each cast once";
}

// The run's first step pays one-off costs (lazy initialisation, first allocations): its ops,
// their casts and kernels go to rows of their own, the table keeps the other steps, and the
// two added back are the table aggregated in one piece (the peer: an aggregator without it).
TEST(OpAggregator, TheWarmUpStepsRowsAreKeptApartAndAddBackToTheWholeTable) {
  std::vector<OpRecord> ops;
  for (int step = 1; step <= 3; ++step) {
    const uint64_t base = step * 10;
    const int64_t t0 = step * 10000, slow = step == 1 ? 900 : 0;  // step 1's linear is slow
    ops.push_back(op(base + 1, 0, "aten::linear", OpCategory::kDemoted, t0, t0 + 100 + slow, step));
    OpRecord cast = op(base + 2, base + 1, "aten::to", OpCategory::kAutocastCast, t0 + 10, t0 + 30, step);
    cast.cast_bytes = 2048;
    ops.push_back(cast);
    ops.push_back(op(base + 3, base + 1, "aten::addmm", OpCategory::kUnchanged, t0 + 40, t0 + 90 + slow, step));
  }
  ops.push_back(op(5, 0, "aten::normal_", OpCategory::kUnchanged, 10500, 10800, 1));  // step 1 only
  // Op 99 never arrives: its kernel ends unattributed, in the newest step seen (3).
  const std::vector<KernelRecord> kernels = {kernel(12, 0, 5, false), kernel(13, 10, 60, true),
                                             kernel(23, 100, 130, true), kernel(99, 200, 210, false)};
  OpAggregator apart, whole;
  apart.keep_step_apart(kWarmupStep);
  for (OpAggregator* agg : {&apart, &whole}) {
    agg->add_ops(ops);
    agg->add_kernels(kernels);
    agg->release_parked();
  }
  // The kernel table follows: each settled kernel says whether its step is the one kept apart.
  std::map<int64_t, std::pair<int64_t, bool>> settled;  // kernel start -> step, apart
  for (const auto& k : apart.take_settled()) settled[k.record.start_ns] = {k.record.step, k.apart};
  EXPECT_EQ(settled, (std::map<int64_t, std::pair<int64_t, bool>>{
                         {0, {1, true}}, {10, {1, true}}, {100, {2, false}}, {200, {3, false}}}));
  for (const auto& k : whole.take_settled()) EXPECT_FALSE(k.apart) << "nothing is apart without keep_step_apart";
  const auto find = [](const std::vector<OpStats>& rows, const char* name) -> const OpStats* {
    for (const auto& r : rows)
      if (r.name == name) return &r;
    return nullptr;
  };
  const std::vector<OpStats> steady = apart.op_stats(), warmup = apart.warmup_op_stats();
  ASSERT_NE(find(steady, "aten::linear"), nullptr);
  EXPECT_EQ(find(steady, "aten::linear")->calls, 2);
  EXPECT_EQ(find(steady, "aten::linear")->cpu_time_ns, 200);
  EXPECT_EQ(find(steady, "aten::linear")->gpu_time_ns, 30);  // step 2's kernel only
  EXPECT_EQ(find(steady, "aten::normal_"), nullptr);
  ASSERT_NE(find(warmup, "aten::linear"), nullptr);
  EXPECT_EQ(find(warmup, "aten::linear")->cpu_time_ns, 1000);
  EXPECT_EQ(find(warmup, "aten::linear")->cast_gpu_time_ns, 5);
  EXPECT_EQ(find(warmup, "aten::addmm")->tensor_core_kernels, 1);
  EXPECT_FALSE(find(warmup, "aten::addmm")->top_level);

  const OpTable left = op_table_without_warmup(steady, warmup, true);
  ASSERT_TRUE(left.warmup_left_out.has_value());
  EXPECT_EQ(left.warmup_left_out->calls, 2);  // linear and normal_: top-level
  EXPECT_EQ(left.warmup_left_out->cpu_time_ns, 1000 + 300);
  EXPECT_EQ(left.warmup_left_out->gpu_time_ns, 5 + 50);
  EXPECT_EQ(left.rows.size(), steady.size());

  // Alone (no other step profiled), step 1 is the table: the whole aggregation, row for row.
  const OpTable merged = op_table_without_warmup(steady, warmup, false);
  EXPECT_FALSE(merged.warmup_left_out.has_value());
  const std::vector<OpStats> expected = whole.op_stats();
  ASSERT_EQ(merged.rows.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const OpStats &a = merged.rows[i], &b = expected[i];
    EXPECT_EQ(std::tie(a.name, a.category, a.top_level, a.calls, a.cpu_time_ns, a.gpu_time_ns, a.kernels,
                       a.tensor_core_kernels, a.cast_calls, a.cast_bytes, a.cast_cpu_time_ns, a.cast_gpu_time_ns),
              std::tie(b.name, b.category, b.top_level, b.calls, b.cpu_time_ns, b.gpu_time_ns, b.kernels,
                       b.tensor_core_kernels, b.cast_calls, b.cast_bytes, b.cast_cpu_time_ns, b.cast_gpu_time_ns))
        << a.name;
  }
  // A step 1 that compiled: its compiles stay (in no category; compile_time says them), as
  // top-level rows since the rows that held them are left out, and are no part of the
  // left-out time; the rest is left out as ever.
  std::vector<OpStats> compiling = warmup;
  OpStats region = compiling.front();  // a compiled region's first call, a compile inside it
  region.name = "Torch-Compiled Region: 0/0";
  region.cpu_time_ns = 5000;
  region.gpu_time_ns = 70;
  compiling.push_back(region);
  OpStats compile = region;
  compile.name = std::string(kTorchCompileOp);
  compile.top_level = false;
  compile.cpu_time_ns = 4000;
  compile.gpu_time_ns = 60;  // tuning kernels
  compiling.push_back(compile);
  std::vector<OpStats> steady_regions = steady;  // the region's later calls
  steady_regions.push_back(region);
  steady_regions.back().cpu_time_ns = 6000;
  const OpTable compiled = op_table_without_warmup(steady_regions, compiling, true);
  ASSERT_TRUE(compiled.warmup_left_out.has_value());
  EXPECT_EQ(compiled.warmup_left_out->calls, 2 + 1);  // linear, normal_, the region
  EXPECT_EQ(compiled.warmup_left_out->cpu_time_ns, 1000 + 300 + 5000 - 4000);
  EXPECT_EQ(compiled.warmup_left_out->gpu_time_ns, 5 + 50 + 70 - 60);
  EXPECT_EQ(compiled.rows.size(), steady_regions.size() + 1);
  EXPECT_EQ(compile_time(compiled.rows).cpu_time_ns, 4000);
  EXPECT_EQ(compile_time(compiled.rows).gpu_time_ns, 60);
  EXPECT_TRUE(compiled.rows.back().top_level) << "held by a row the table left out";
  // In no category, and no steady row's time taken for it.
  int64_t categorized = 0, steady_time = 0;
  for (const CategoryTotals& t : category_totals(compiled.rows)) categorized += t.cpu_time_ns;
  for (const CategoryTotals& t : category_totals(steady_regions)) steady_time += t.cpu_time_ns;
  EXPECT_EQ(categorized, steady_time);

  const std::map<std::string, std::string> meta = {
      {meta_key::kWarmupLeftOut, warmup_meta_value(*left.warmup_left_out)}};
  const auto read = warmup_left_out_from_meta(meta);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(std::tie(read->step, read->calls, read->cpu_time_ns, read->gpu_time_ns),
            std::tie(left.warmup_left_out->step, left.warmup_left_out->calls, left.warmup_left_out->cpu_time_ns,
                     left.warmup_left_out->gpu_time_ns));
  EXPECT_FALSE(read->kernels_left_out);  // as sessions written before the kernel table left it out read
  EXPECT_FALSE(warmup_left_out_from_meta({{meta_key::kWarmupLeftOut, ""}}).has_value());

  WarmupLeftOut with_kernels = *left.warmup_left_out;
  with_kernels.kernels_left_out = true;
  std::tie(with_kernels.kernels, with_kernels.kernel_gpu_ns, with_kernels.unattributed_gpu_ns,
           with_kernels.longest_kernel_ns) = std::tuple{2, 55, 0, 50};
  const auto kernels_read = warmup_left_out_from_meta({{meta_key::kWarmupLeftOut, warmup_meta_value(with_kernels)}});
  ASSERT_TRUE(kernels_read.has_value());
  EXPECT_TRUE(kernels_read->kernels_left_out);
  EXPECT_EQ(std::tie(kernels_read->kernels, kernels_read->kernel_gpu_ns, kernels_read->unattributed_gpu_ns,
                     kernels_read->longest_kernel_ns),
            std::tie(with_kernels.kernels, with_kernels.kernel_gpu_ns, with_kernels.unattributed_gpu_ns,
                     with_kernels.longest_kernel_ns));
  const std::string text = warmup_kernels_text(*kernels_read, GpuAttribution{0, 110}, 2);
  EXPECT_NE(text.find("step 1 left out as warm-up: its 2 kernels took "), std::string::npos) << text;
  EXPECT_NE(text.find("(50% of the other 2 profiled steps together)"), std::string::npos) << text;
  EXPECT_EQ(warmup_kernels_text(*read, GpuAttribution{0, 110}, 2), "") << "its kernels were not left out";
}

// CUPTI hands a full buffer over mid-step, before the step's ops reach the
// aggregator: those kernels wait for their op and are joined when it arrives.
TEST(OpAggregator, KernelsBeforeTheirOpsWaitAndAreJoined) {
  OpAggregator agg;
  agg.add_kernels({kernel(12, 0, 10, true), kernel(11, 20, 25, false), kernel(0, 30, 33, false)});
  EXPECT_EQ(agg.parked_kernels(), 2u);
  auto settled = agg.take_settled();
  ASSERT_EQ(settled.size(), 1u);  // launched outside any op: settled at once
  EXPECT_EQ(settled[0].record.op_id, 0u);
  EXPECT_EQ(settled[0].op_name, "");
  agg.add_ops({op(11, 0, "aten::linear", OpCategory::kDemoted, 0, 100, 3),
               op(12, 11, "aten::addmm", OpCategory::kUnchanged, 5, 95, 3)});
  EXPECT_EQ(agg.parked_kernels(), 0u);
  settled = agg.take_settled();
  ASSERT_EQ(settled.size(), 2u);
  for (const auto& k : settled) EXPECT_EQ(k.record.step, 3);
  const OpStats* linear = nullptr;
  for (const auto& r : agg.op_stats())
    if (r.name == "aten::linear") linear = &r;
  ASSERT_NE(linear, nullptr);
  EXPECT_EQ(linear->gpu_time_ns, 15);  // both kernels, inclusive of addmm's
  EXPECT_EQ(linear->tensor_core_kernels, 1);
  EXPECT_EQ(agg.unattributed_kernels(), 1);
  EXPECT_EQ(agg.kernels_parked_total(), 2);
  EXPECT_EQ(agg.kernels_given_up(), 0);
}

// Parking is bounded: past the bound the oldest waiting kernels are given up on
// (counted, stored with no op), never silently dropped.
TEST(OpAggregator, ParkingIsBoundedAndCounted) {
  OpAggregator agg(64, 0, /*max_parked=*/2);
  agg.add_kernels({kernel(101, 0, 1, false), kernel(102, 0, 1, false), kernel(103, 0, 1, false)});
  EXPECT_EQ(agg.parked_kernels(), 2u);
  EXPECT_EQ(agg.kernels_given_up(), 1);
  const auto settled = agg.take_settled();
  ASSERT_EQ(settled.size(), 1u);
  EXPECT_EQ(settled[0].record.op_id, 0u);  // stored as "no op"
  agg.add_ops({op(102, 0, "aten::mm", OpCategory::kUnchanged, 0, 10, 1)});
  EXPECT_EQ(agg.take_settled().size(), 1u);
  agg.release_parked();
  EXPECT_EQ(agg.take_settled().size(), 1u);
  EXPECT_EQ(agg.kernels_given_up(), 2);
  EXPECT_EQ(agg.unattributed_kernels(), 2);
}

// Ops are remembered for the kernels that come late (op_memory_steps steps), then
// forgotten step by step; an op that arrives after a newer step's ops is kept at
// least as long as its step, never dropped early.
TEST(OpAggregator, RemembersOpsForTheirStepsThenForgetsThem) {
  OpAggregator agg(/*op_memory_steps=*/2);
  const auto add_step = [&](int64_t step) {
    std::vector<OpRecord> ops;
    for (uint64_t i = 0; i < 3000; ++i)  // forgetting starts past 4,096 ops kept
      ops.push_back(op(static_cast<uint64_t>(step) * 10000 + i, 0, "aten::add", OpCategory::kUnchanged, 0, 1, step));
    agg.add_ops(ops);
  };
  for (int64_t step = 1; step <= 4; ++step) add_step(step);
  EXPECT_FALSE(agg.step_of(10000).has_value());  // step 1: 1 + 2 < 4
  EXPECT_FALSE(agg.step_of(12999).has_value());
  EXPECT_EQ(agg.step_of(20000), 2);
  EXPECT_EQ(agg.step_of(40000), 4);
  agg.add_ops({op(39999, 0, "aten::mul", OpCategory::kUnchanged, 0, 1, 3)});  // late, after step 4's
  add_step(5);
  EXPECT_FALSE(agg.step_of(20000).has_value());
  EXPECT_EQ(agg.step_of(30000), 3);
  add_step(6);
  EXPECT_FALSE(agg.step_of(30000).has_value());
  EXPECT_EQ(agg.step_of(39999), 3);  // kept with step 4's ops
  EXPECT_EQ(agg.step_of(40000), 4);
  add_step(7);
  EXPECT_FALSE(agg.step_of(39999).has_value());
  EXPECT_FALSE(agg.step_of(40000).has_value());
  EXPECT_EQ(agg.step_of(50000), 5);
  EXPECT_EQ(agg.step_of(70000), 7);
  // A kernel of a forgotten op waits (its op may never come again), one of a remembered op is joined.
  agg.add_kernels({kernel(40000, 0, 5, false), kernel(70001, 0, 5, false)});
  EXPECT_EQ(agg.parked_kernels(), 1u);
}

// Comparisons keep per-step times so one preempted step can be outvoted by a median.
TEST(OpAggregator, KeepsPerStepTimesForTheFirstStepsWhenAsked) {
  OpAggregator agg(64, /*max_step_samples=*/2);
  std::vector<OpRecord> ops;
  for (int step = 1; step <= 3; ++step) {
    const uint64_t base = step * 10;
    ops.push_back(op(base + 1, 0, "aten::linear", OpCategory::kDemoted, 0, 100 * step, step));
    ops.push_back(op(base + 4, base + 1, "aten::addmm", OpCategory::kUnchanged, 10, 20, step));
  }
  ops.push_back(op(15, 0, "aten::relu", OpCategory::kUnchanged, 0, 7, 1));  // step 1 only
  agg.add_ops(ops);
  agg.add_kernels({kernel(14, 0, 30, true), kernel(24, 0, 40, true), kernel(34, 0, 50, true)});
  EXPECT_EQ(agg.sampled_steps(), (std::vector<int64_t>{1, 2}));  // bounded: step 3 has totals only
  const OpStats* linear = nullptr;
  const OpStats* relu = nullptr;
  for (const auto& r : agg.op_stats()) {
    if (r.name == "aten::linear") linear = &r;
    if (r.name == "aten::relu") relu = &r;
  }
  ASSERT_NE(linear, nullptr);
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(linear->step_cpu_time_ns, (std::vector<int64_t>{100, 200}));
  EXPECT_EQ(linear->cpu_time_ns, 600);  // the totals still count every step
  EXPECT_EQ(linear->step_gpu_time_ns, (std::vector<int64_t>{30, 40}));  // inclusive, by the op's step
  EXPECT_EQ(linear->gpu_time_ns, 120);
  EXPECT_EQ(relu->step_cpu_time_ns, (std::vector<int64_t>{7}));  // absent after: 0 there
  // Off by default: a live session's rows carry no per-step vectors.
  OpAggregator plain;
  plain.add_ops(ops);
  EXPECT_TRUE(plain.op_stats().front().step_cpu_time_ns.empty());
  EXPECT_TRUE(plain.sampled_steps().empty());
}

// A row per signature and top-level or nested: calls alike in all of name, module,
// phase, category and dtypes/shapes share one; any one of them apart makes another,
// and so does the same signature called at top level and inside another op.
TEST(OpAggregator, OneRowPerSignatureAndTopLevelOrNested) {
  OpAggregator agg;
  auto linear = [](uint64_t id, uint64_t parent) {
    OpRecord r = op(id, parent, "aten::linear", OpCategory::kDemoted, static_cast<int64_t>(id) * 100,
                    static_cast<int64_t>(id) * 100 + 10);
    r.input_dtypes = {"float", "float"};
    r.input_shapes = {{16, 32}, {32, 32}};
    r.output_dtypes = {"c10::BFloat16"};
    return r;
  };
  std::vector<OpRecord> ops{linear(1, 0), linear(2, 0)};  // one row, 2 calls
  uint64_t id = 3;
  auto apart = [&](auto change) {
    OpRecord r = linear(id++, 0);
    change(r);
    ops.push_back(r);
  };
  apart([](OpRecord& r) { r.name = "aten::matmul"; });
  apart([](OpRecord& r) { r.module = "fc2"; });
  apart([](OpRecord& r) { r.phase = Phase::kBackward; });
  apart([](OpRecord& r) { r.category = OpCategory::kUnchanged; });
  apart([](OpRecord& r) { r.input_dtypes = {"float", "c10::BFloat16"}; });
  apart([](OpRecord& r) { r.input_shapes = {{16, 32, 32}}; });  // the same dims, split otherwise
  apart([](OpRecord& r) { r.output_dtypes = {"float"}; });
  ops.push_back(linear(id++, 0));                  // the first row again
  ops.push_back(op(id++, 0, "aten::relu", OpCategory::kUnchanged, 5000, 5100));
  ops.push_back(linear(id++, ops.back().id));       // nested: a row of its own
  agg.add_ops(ops);
  const auto rows = agg.op_stats();
  EXPECT_EQ(rows.size(), 1u + 7u + 1u + 1u);
  int64_t first_row_calls = 0, nested_rows = 0;
  for (const OpStats& r : rows) {
    if (r.name == "aten::linear" && r.module == "fc" && r.top_level && r.output_dtypes.size() == 1 &&
        r.output_dtypes[0] == "c10::BFloat16" && r.input_shapes.size() == 2 && r.phase == Phase::kForward &&
        r.category == OpCategory::kDemoted && r.input_dtypes[1] == "float")
      first_row_calls = r.calls;
    nested_rows += !r.top_level;
  }
  EXPECT_EQ(first_row_calls, 3);
  EXPECT_EQ(nested_rows, 1);
}

TEST(OpAggregator, ChildrenOfAutogradNodesAreTopLevel) {
  OpAggregator agg;
  OpRecord node = op(1, 0, "autograd::engine::evaluate_function: AddmmBackward0",
                     OpCategory::kUnchanged, 0, 50);
  node.phase = Phase::kBackward;
  node.autograd_node = true;
  OpRecord mm = op(2, 1, "aten::mm", OpCategory::kUnchanged, 5, 45);
  mm.phase = Phase::kBackward;
  agg.add_ops({node, mm});
  for (const auto& r : agg.op_stats()) EXPECT_EQ(r.top_level, r.name == "aten::mm") << r.name;
}

}  // namespace
}  // namespace ampscope::profiler
