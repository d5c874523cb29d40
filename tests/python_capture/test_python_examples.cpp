// `ampscope run` on examples/: PyTorch's AMP example loops, run unmodified under
// capture on the CPU, and their sessions read back as `summary` reads them. Each
// check is a fact about the script that PyTorch decides (autocast's op lists, the
// GradScaler's rule and its own printed scale, what the script printed) against
// what the session recorded.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "profiler/analysis/warmup_step.h"
#include "profiler/store/session_reader.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/gradscaler_rule.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::profiler::OpCategory;
using ampscope::profiler::OpStats;
using ampscope::profiler::Phase;
using ampscope::profiler::SessionReader;
using ampscope::test::expect_gradscaler_rule;
using ampscope::test::ScratchDir;

struct Captured {
  int exit_code = -1;
  std::string output;
  std::filesystem::path session;
};

Captured capture(const ScratchDir& dir, const std::string& example, const std::string& script_args,
                 const std::string& flags = "") {
  Captured c;
  c.session = dir / (example + ".ampscope");
  const auto r = ampscope::test::ampscope(fmt::format("run --out '{}' {} '{}/{}.py' {}", c.session.string(), flags,
                                                      AMPSCOPE_EXAMPLES_DIR, example, script_args));
  c.exit_code = r.exit_code;
  c.output = r.output;
  return c;
}

double printed(const std::string& output, const std::string& label) {
  std::smatch m;
  if (!std::regex_search(output, m, std::regex(label + " ([-0-9.e+]+)"))) return NAN;
  return std::stod(m[1]);
}

std::vector<const OpStats*> rows(const std::vector<OpStats>& table, const std::string& name, const std::string& module) {
  std::vector<const OpStats*> out;
  for (const auto& r : table)
    if (r.top_level && r.name == name && r.module == module) out.push_back(&r);
  return out;
}

class PythonExamples : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  }
  ScratchDir dir_;
};

TEST_F(PythonExamples, TypicalFp16LoopHasDemotedKeptAndPromotedOpsWithModulePathsAndTheScaleHistory) {
  const Captured c = capture(dir_, "amp_typical", "--steps 20 --init-scale 1048576 --growth-interval 4",
                             "--grad-every 5 --sample-budget 0");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const auto session = SessionReader::open(c.session.string());
  const auto meta = session.meta();
  EXPECT_EQ(meta.precision, "fp16");
  EXPECT_TRUE(meta.scaler_enabled);
  EXPECT_EQ(session.meta_value("final_state").value_or(""), "finished");
  if (meta.device == "cpu") {  // PyTorch's answer on this CPU's bf16/fp16 matmul kernels
    EXPECT_FALSE(meta.cpu_isa.empty());
    for (const auto& path : {meta.cpu_bf16_matmul, meta.cpu_fp16_matmul})
      EXPECT_TRUE(path == ampscope::profiler::kCpuMatmulOneDnn || path == ampscope::profiler::kCpuMatmulFallback) << path;
  }

  const auto table = session.op_stats();
  // nn.Linear is on autocast's lower-precision list: float32 in, float16 out, in each module.
  for (const std::string module : {"embed", "blocks.0.fc", "blocks.2.fc", "head"}) {
    const auto linear = rows(table, "aten::linear", module);
    ASSERT_FALSE(linear.empty()) << module;
    EXPECT_EQ(linear.front()->category, OpCategory::kDemoted) << module;
    EXPECT_EQ(linear.front()->input_dtypes.front(), "float32");
    EXPECT_EQ(linear.front()->output_dtypes.front(), "float16");
    EXPECT_EQ(linear.front()->calls, 19) << "step 1, the warm-up, left out";
  }
  // 19 linear calls per module over steps 2-20: per-step times divide by 19, though the
  // last GradScaler.update() ran after the last optimizer step (a 21st step number).
  EXPECT_EQ(session.meta_value("profiled_steps").value_or(""), "19");
  // Step 1's ops are recorded all the same (the trace has them); the table's time is the
  // other steps' calls, to the nanosecond (the top-level calls: autocast's redispatch of
  // the demoted linear is an unchanged linear inside it).
  int64_t embed_ns = 0, embed_step1_calls = 0;
  for (const auto& op : session.ops()) {
    if (op.name != "aten::linear" || op.module != "embed" || op.parent_id != 0) continue;
    if (op.step == 1) ++embed_step1_calls;
    else embed_ns += op.end_ns - op.start_ns;
  }
  EXPECT_EQ(embed_step1_calls, 1);
  EXPECT_EQ(rows(table, "aten::linear", "embed").front()->cpu_time_ns, embed_ns);
  const auto warmup = ampscope::profiler::warmup_left_out_from_meta(session.meta_values());
  ASSERT_TRUE(warmup.has_value());
  EXPECT_EQ(warmup->step, 1);
  EXPECT_GT(warmup->calls, 0);
  // x (float32) + relu(fc(x)) (float16): type promotion runs it in float32.
  const auto add = rows(table, "aten::add", "blocks.1");
  ASSERT_FALSE(add.empty());
  EXPECT_EQ(add.front()->category, OpCategory::kPromoted);
  // cross_entropy is on autocast's float32 list: the float16 logits are computed on in float32.
  bool kept_cross_entropy = false;
  for (const auto& r : table)
    kept_cross_entropy |= r.top_level && r.name == "aten::cross_entropy_loss" && r.category == OpCategory::kKeptFp32 &&
                          r.input_dtypes.front() == "float16" && r.output_dtypes.front() == "float32";
  EXPECT_TRUE(kept_cross_entropy);
  // Backward ops carry their forward op's module.
  bool backward_in_module = false;
  for (const auto& r : table) backward_in_module |= r.phase == Phase::kBackward && r.module == "blocks.2.fc";
  EXPECT_TRUE(backward_in_module);
  // The add's backward casts the gradient of its float16 operand back to float16: the
  // promotion's cast, in each block. The script's one cast is Net.forward's .float() (and its
  // backward): the root model's own code, named by its class where "-" said no module.
  // GradScaler's own (its fp64 reciprocal of the scale) is GradScaler's.
  std::set<std::string> promotion_casts, explicit_casts;
  for (const auto& r : table) {
    if (!r.top_level || (r.category != OpCategory::kPromotionCast && r.category != OpCategory::kExplicitCast)) continue;
    const std::string where = fmt::format("{} {} {}>{}", r.module, to_string(r.phase), r.input_dtypes.at(0),
                                          r.output_dtypes.at(0));
    if (r.category == OpCategory::kPromotionCast) promotion_casts.insert(where);
    if (r.category == OpCategory::kExplicitCast) explicit_casts.insert(where);
  }
  EXPECT_EQ(promotion_casts, (std::set<std::string>{"blocks.0 backward float32>float16",
                                                    "blocks.1 backward float32>float16",
                                                    "blocks.2 backward float32>float16"}));
  EXPECT_EQ(explicit_casts, (std::set<std::string>{"Net forward float16>float32", "Net backward float32>float16",
                                                   "(GradScaler) optimizer float32>float64",
                                                   "(GradScaler) optimizer float64>float32"}));
  // The optimizer's own update (SGD's adds) is no GradScaler's, though GradScaler.step runs it.
  int64_t sgd_rows = 0;
  for (const auto& r : table) {
    if (r.phase != Phase::kOptimizer || r.name.find("add_") == std::string::npos) continue;
    ++sgd_rows;
    EXPECT_EQ(r.module, "") << r.name;
  }
  EXPECT_GT(sgd_rows, 0);

  const auto steps = session.steps();
  ASSERT_EQ(steps.size(), 20u);
  int backoffs = 0, growths = 0;
  expect_gradscaler_rule(steps, session.optimizer_steps(), 4, &backoffs, &growths);
  EXPECT_GT(backoffs, 0);
  EXPECT_GT(growths, 0);
  // The script's own GradScaler, after the loop, and its last loss.
  EXPECT_EQ(session.optimizer_steps().back().loss_scale_after, printed(c.output, "scale"));
  EXPECT_NEAR(steps.back().loss, printed(c.output, "final loss"), 1e-4);

  const auto grad_steps = session.gradient_steps();
  EXPECT_EQ(grad_steps, (std::vector<int64_t>{5, 10, 15, 20}));
  const auto grads = session.gradients(20);
  std::set<std::string> names;
  for (const auto& g : grads) {
    names.insert(g.parameter);
    EXPECT_EQ(g.loss_scale, steps.back().loss_scale);
  }
  EXPECT_TRUE(names.count("blocks.0.fc.weight") && names.count("head.bias")) << fmt::format("{}", fmt::join(names, " "));

  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", c.session.string()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  for (const char* text : {"demoted", "kept_fp32", "promoted", "blocks.0.fc", "loss scale by step", "Gradients at step 20",
                           "Optimizers", "over 19 profiled steps", "(step 1 left out as warm-up: its ops took "})
    EXPECT_NE(summary.output.find(text), std::string::npos) << text << "\n" << summary.output;
  // The JSON summary says the same: the table's steps and step 1's own top-level calls.
  const std::string json_path = (dir_ / "typical.json").string();
  const auto exported =
      ampscope::test::ampscope(fmt::format("export -f json -o '{}' '{}'", json_path, c.session.string()));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  std::ifstream json_file(json_path);
  const nlohmann::json exported_summary = nlohmann::json::parse(json_file);
  const auto& totals = exported_summary.at("totals");
  EXPECT_EQ(totals.at("op_table_steps"), 19);
  EXPECT_EQ(totals.at("warmup_left_out").at("step"), 1);
  EXPECT_EQ(totals.at("warmup_left_out").at("calls"), warmup->calls);
}

TEST_F(PythonExamples, ClippingAfterUnscaleRecordsTheUnscaleCallAndTheUnclippedNorm) {
  const Captured c = capture(dir_, "amp_clipping", "--steps 10");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const auto session = SessionReader::open(c.session.string());
  const auto opt = session.optimizer_steps();
  ASSERT_EQ(opt.size(), 10u);
  for (const auto& r : opt) EXPECT_EQ(r.unscale_calls, 1) << "step " << r.step;
  const auto steps = session.steps();
  ASSERT_EQ(steps.size(), 10u);
  EXPECT_NEAR(steps.back().grad_norm, printed(c.output, "last unclipped norm"), 1e-4);
  // Clipping is the optimizer phase's, as in the built-in trainer: its norms and the
  // gradients' scaling read "other" before clip_grad_norm_ opened the phase.
  int64_t clipping_calls = 0;
  for (const auto& r : session.op_stats())
    if (r.top_level && (r.name == "aten::_foreach_norm" || r.name == "aten::linalg_vector_norm" ||
                        r.name == "aten::clamp" || r.name == "aten::_foreach_mul_")) {
      EXPECT_EQ(r.phase, Phase::kOptimizer) << r.name;
      clipping_calls += r.calls;
    }
  EXPECT_GE(clipping_calls, 10 * 3) << "a norm, the clamp and the scaling each step";
}

TEST_F(PythonExamples, GradientAccumulationMakesOneStepPerOptimizerStep) {
  const Captured c = capture(dir_, "amp_accumulation", "--steps 6 --accumulate 4");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const auto session = SessionReader::open(c.session.string());
  const auto steps = session.steps();
  ASSERT_EQ(steps.size(), 6u);
  // Four micro-batches per step: each module's linear ran four times in every step.
  std::map<int64_t, int> linears;
  for (const auto& op : session.ops())
    if (op.name == "aten::linear" && op.module == "0" && op.depth == 0) ++linears[op.step];
  ASSERT_EQ(linears.size(), 6u);
  for (const auto& [step, calls] : linears) {
    EXPECT_EQ(calls, 4) << "step " << step;
  }
  for (const auto& s : steps) EXPECT_TRUE(std::isfinite(s.loss) || s.skipped);
  // A Linear's bias gradient: addmm broadcast the bias over the batch of 8, so autograd's
  // engine sums its gradient back to the bias's shape after AddmmBackward0, outside that
  // node: the sum is the Linear's all the same (Linear(32, 64) is "0", Linear(64, 10) "2").
  std::map<std::string, std::string> bias_sums;  // output features -> module
  for (const auto& r : session.op_stats())
    if (r.top_level && r.phase == Phase::kBackward && r.name == "aten::sum" && !r.input_shapes.empty() &&
        r.input_shapes.front().size() == 2 && r.input_shapes.front()[0] == 8)
      bias_sums[std::to_string(r.input_shapes.front()[1])] += r.module + ";";
  EXPECT_EQ(bias_sums, (std::map<std::string, std::string>{{"10", "2;"}, {"64", "0;"}}));
}

TEST_F(PythonExamples, GradientPenaltyOnTheScaledLossKeepsTheLossTheScriptBackpropagated) {
  const Captured c = capture(dir_, "amp_gradient_penalty", "--steps 8");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const auto session = SessionReader::open(c.session.string());
  const auto steps = session.steps();
  ASSERT_EQ(steps.size(), 8u);
  EXPECT_NEAR(steps.back().loss, printed(c.output, "final loss"), 1e-3);
  int backoffs = 0, growths = 0;
  expect_gradscaler_rule(steps, session.optimizer_steps(), 2000, &backoffs, &growths);
  // The script writes no cast: every cast in its backward passes is autocast's, the
  // backward of one (a gradient cast back) or, in the second backward, the backward of
  // that backward (autograd.grad's create_graph built it). Each belongs to the layer
  // whose forward autocast cast for; the second backward's matmuls, too.
  int backward_casts = 0, second_backward_casts = 0, layer_matmuls = 0;
  for (const auto& r : session.op_stats()) {
    if (!r.top_level || r.phase != Phase::kBackward) continue;
    if (r.category == OpCategory::kAutocastCast || r.category == OpCategory::kExplicitCast) {
      ++backward_casts;
      EXPECT_EQ(r.category, OpCategory::kAutocastCast) << r.name << " " << fmt::format("{}", r.input_dtypes);
      // fp32 -> fp16: casting the weight's gradient back (fp16 -> fp32) needs a second backward.
      second_backward_casts += r.input_dtypes.front() == "float32" && r.module != "loss_fn";
    }
    if (r.name == "aten::mm") {
      EXPECT_TRUE(r.module == "0" || r.module == "2") << fmt::format("{}", r.input_shapes);
      ++layer_matmuls;
    }
  }
  EXPECT_GT(second_backward_casts, 0);
  EXPECT_GT(backward_casts, second_backward_casts);
  EXPECT_GT(layer_matmuls, 0);
  // autograd.grad is a backward pass as backward() is: its seed gradient (ones_like) is the
  // backward's, and so is each loss's scaling (GradScaler's multiply), as in the built-in
  // trainer's recipe; both read "other" when only backward() opened the phase.
  int64_t seeds = 0, scalings = 0;
  for (const auto& r : session.op_stats()) {
    if (!r.top_level) continue;
    if (r.name == "aten::ones_like") {
      EXPECT_EQ(r.phase, Phase::kBackward);
      seeds += r.calls;
    }
    if (r.name == "aten::mul" && r.module == "(GradScaler)") {
      EXPECT_EQ(r.phase, Phase::kBackward) << fmt::format("{}", r.input_shapes);
      scalings += r.calls;
    }
  }
  // Over the steps the table covers: step 1, the warm-up, is left out of it.
  const int64_t table_steps = std::stoll(session.meta_value("profiled_steps").value_or("0"));
  EXPECT_EQ(table_steps, 7);
  EXPECT_EQ(seeds, 2 * table_steps) << "autograd.grad's and backward()'s, each step";
  EXPECT_GE(scalings, 2 * table_steps);
}

TEST_F(PythonExamples, TwoOptimizersOneScalerSkipPerOptimizer) {
  const Captured c = capture(dir_, "amp_two_optimizers",
                             "--steps 16 --grad-gain1 16 --init-scale 65536 --growth-interval 2");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const auto session = SessionReader::open(c.session.string());
  const auto steps = session.steps();
  const auto opt = session.optimizer_steps();
  ASSERT_EQ(steps.size(), 16u);
  ASSERT_EQ(opt.size(), 32u);
  int split = 0, both_ran = 0;
  for (size_t i = 0; i + 1 < opt.size(); i += 2) {
    ASSERT_EQ(opt[i].step, opt[i + 1].step);
    EXPECT_EQ(opt[i].name, "SGD");
    EXPECT_EQ(opt[i + 1].name, "Adam");
    EXPECT_EQ(opt[i].unscale_calls, 1);      // the script unscales optimizer0 itself
    EXPECT_EQ(opt[i + 1].unscale_calls, 0);  // scaler.step unscales optimizer1
    split += !opt[i].skipped && opt[i + 1].skipped;
    both_ran += !opt[i].skipped && !opt[i + 1].skipped;
  }
  EXPECT_GT(split, 0);
  EXPECT_GT(both_ran, 0);
  int backoffs = 0, growths = 0;
  expect_gradscaler_rule(steps, opt, 2, &backoffs, &growths);
  EXPECT_EQ(opt.back().loss_scale_after, printed(c.output, "scale"));
  // Two models: each one's paths carry the script's name for it, the first one's too
  // (it was called first, while the second already existed).
  const auto table = session.op_stats();
  EXPECT_FALSE(rows(table, "aten::linear", "model0.0").empty());
  EXPECT_FALSE(rows(table, "aten::linear", "model1.0").empty());
  EXPECT_TRUE(rows(table, "aten::linear", "0").empty());
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", c.session.string()));
  EXPECT_NE(summary.output.find(fmt::format("steps where one optimizer skipped and another stepped: {}", split)),
            std::string::npos)
      << summary.output;
}

TEST_F(PythonExamples, CustomFunctionWithCastInputsFloat32RunsInFloat32) {
  const Captured c = capture(dir_, "amp_custom_function", "--steps 6");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const auto table = SessionReader::open(c.session.string()).op_stats();
  const auto linear = rows(table, "aten::linear", "0");
  ASSERT_FALSE(linear.empty());
  EXPECT_EQ(linear.front()->category, OpCategory::kDemoted);
  // The Function's forward runs its own ops, each a row of the table: custom_fwd's cast of
  // the float16 input to float32, then the matmul in float32, where custom_fwd turned
  // autocast off: the script's choices (cast_inputs=torch.float32), not autocast's, and
  // not "unchanged".
  int forward_mm = 0;
  for (const auto* r : rows(table, "aten::mm", "2")) {
    if (r->phase != Phase::kForward) continue;
    ++forward_mm;
    EXPECT_EQ(r->input_dtypes, (std::vector<std::string>{"float32", "float32"}));
    EXPECT_EQ(r->category, OpCategory::kAutocastOff);
  }
  EXPECT_EQ(forward_mm, 1);
  int input_casts = 0;
  for (const auto* r : rows(table, "aten::to", "2"))
    input_casts += r->phase == Phase::kForward && r->input_dtypes.front() == "float16" &&
                   r->output_dtypes.front() == "float32" && r->category == OpCategory::kExplicitCast;
  EXPECT_EQ(input_casts, 1);
  EXPECT_TRUE(rows(table, "Float32MM", "2").empty());  // a container, as a backward node is
  // Its backward hands back a float32 gradient for the float16 input, which autograd's
  // engine casts back: the other half of custom_fwd's cast, the script's too (autocast cast
  // nothing for this Function).
  int gradient_casts = 0;
  for (const auto* r : rows(table, "aten::to", "2")) {
    if (r->phase != Phase::kBackward) continue;
    ++gradient_casts;
    EXPECT_EQ(r->input_dtypes.front(), "float32");
    EXPECT_EQ(r->output_dtypes.front(), "float16");
    EXPECT_EQ(r->category, OpCategory::kExplicitCast);
  }
  EXPECT_EQ(gradient_casts, 1);
}

// Compiled, dynamo traces the Function into the graph, where its body shares one autograd
// number: custom_fwd's cast of the float16 input and autograd's cast of its gradient back
// read as a matmul's inner steps ("unchanged"). They are the script's, as in eager, and the
// matmul custom_fwd ran with autocast turned off (in the body's own graph) is autocast_off.
TEST_F(PythonExamples, CustomFunctionCompiledHasTheScriptsCastsAsInEager) {
  const Captured c = capture(dir_, "amp_custom_function", "--steps 3 --compile aot_eager");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  std::map<std::pair<Phase, std::vector<std::string>>, std::set<OpCategory>> casts;  // (phase, in/out) -> categories
  std::set<OpCategory> forward_mm;
  for (const auto& r : SessionReader::open(c.session.string()).op_stats()) {
    if (!r.compiled || r.module != "2") continue;
    if (r.name == "aten::_to_copy") casts[{r.phase, {r.input_dtypes.front(), r.output_dtypes.front()}}].insert(r.category);
    if (r.name == "aten::mm" && r.phase == Phase::kForward) forward_mm.insert(r.category);
  }
  EXPECT_EQ(forward_mm, std::set<OpCategory>{OpCategory::kAutocastOff});
  using Key = std::pair<Phase, std::vector<std::string>>;
  EXPECT_EQ(casts, (std::map<Key, std::set<OpCategory>>{
                       {{Phase::kForward, {"float16", "float32"}}, {OpCategory::kExplicitCast}},
                       {{Phase::kBackward, {"float32", "float16"}}, {OpCategory::kExplicitCast}}}));
}

TEST_F(PythonExamples, Bf16WithoutScalerHasNoLossScale) {
  const Captured c = capture(dir_, "bf16_no_scaler", "--steps 10");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const auto session = SessionReader::open(c.session.string());
  EXPECT_EQ(session.meta().precision, "bf16");
  EXPECT_FALSE(session.meta().scaler_enabled);
  const auto steps = session.steps();
  ASSERT_EQ(steps.size(), 10u);
  for (const auto& s : steps) {
    EXPECT_EQ(s.loss_scale, 1.0);
    EXPECT_FALSE(s.skipped);
  }
  EXPECT_NEAR(steps.back().loss, printed(c.output, "final loss"), 1e-4);
  const auto table = session.op_stats();
  const auto linear = rows(table, "aten::linear", "3");
  ASSERT_FALSE(linear.empty());
  EXPECT_EQ(linear.front()->output_dtypes.front(), "bfloat16");
  EXPECT_EQ(linear.front()->category, OpCategory::kDemoted);
}

TEST_F(PythonExamples, ValidationUnderNoGradAndInferenceModeAddsOpsNotSteps) {
  const Captured c = capture(dir_, "amp_validation", "--steps 8 --validate-every 4");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const auto session = SessionReader::open(c.session.string());
  EXPECT_EQ(session.steps().size(), 8u);
  // 8 training forwards and 2 validations of 2 forwards each, all demoted by autocast; the
  // validations' calls are a phase of their own, not the training forward's.
  const auto table = session.op_stats();
  const auto linear = rows(table, "aten::linear", "0");
  int64_t training = 0, validation = 0;
  for (const auto* r : linear) {
    EXPECT_EQ(r->category, OpCategory::kDemoted);
    if (r->phase == Phase::kForward) training += r->calls;
    if (r->phase == Phase::kForwardNoGrad) validation += r->calls;
  }
  EXPECT_EQ(training, 7) << "steps 2-8: step 1, the warm-up, is left out of the table";
  EXPECT_EQ(validation, 2 * 2) << "no_grad and inference_mode";
  // The validation loss (computed under autocast, outside the model) is the no-grad pass's too.
  int64_t validation_losses = 0;
  for (const auto& r : table)
    if (r.top_level && r.name == "aten::cross_entropy_loss" && !r.input_shapes.empty() &&
        r.input_shapes[0] == std::vector<int64_t>{64, 10}) {
      EXPECT_EQ(r.phase, Phase::kForwardNoGrad);
      validation_losses += r.calls;
    }
  EXPECT_EQ(validation_losses, 2 * 2);
  // Summary's time by phase and the JSON summary's totals give the validation its own line.
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", c.session.string()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_TRUE(std::regex_search(summary.output, std::regex(R"(Time by phase[^\n]*\n(  \S+ +\d+ calls[^\n]*\n)*)"
                                                           R"(  forward_no_grad +\d+ calls)")))
      << summary.output;
  // In the op tables, the validation's rows keep their dtypes under the header's: the phase
  // column is as wide as its longest name.
  std::istringstream lines(summary.output);
  size_t dtypes_column = std::string::npos, validation_rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("  op ")) dtypes_column = line.find("in \u2192 out");  // ASCII before it
    if (line.empty()) dtypes_column = std::string::npos;
    if (dtypes_column == std::string::npos || line.find(" forward_no_grad ") == std::string::npos) continue;
    ++validation_rows;
    ASSERT_GT(line.size(), dtypes_column) << line;
    EXPECT_TRUE(line[dtypes_column - 1] == ' ' && line.compare(dtypes_column, 2, "fp") == 0)
        << "dtypes not under their header:\n" << line;
  }
  EXPECT_GE(validation_rows, 2u) << summary.output;
  const auto json_path = dir_ / "summary.json";
  const auto exported =
      ampscope::test::ampscope(fmt::format("export -f json -o '{}' '{}'", json_path.string(), c.session.string()));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  std::ifstream in(json_path);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(std::regex_search(json, std::regex(R"("phases":\s*\[[^\]]*"phase":\s*"forward_no_grad")")))
      << json.substr(0, 2000);
}

}  // namespace

namespace {

TEST_F(PythonExamples, TorchrunWithGlooWritesOneSessionPerRankAndSummaryComparesThem) {
  const auto out = dir_ / "ddp.ampscope";
  std::string log;
  const int rc = ampscope::test::run_command(
      fmt::format("PYTHONPATH='{}' '{}' -m torch.distributed.run --standalone --nproc-per-node 2 -m ampscope run "
                  "--out '{}' '{}/ddp_gloo.py' --steps 6 2>&1",
                  AMPSCOPE_PYTHON_PACKAGE_DIR, *ampscope::test::python_with_torch(), out.string(),
                  AMPSCOPE_EXAMPLES_DIR),
      &log);
  ASSERT_EQ(rc, 0) << log;
  const auto rank0 = dir_ / "ddp.rank0.ampscope", rank1 = dir_ / "ddp.rank1.ampscope";
  for (const auto& path : {rank0, rank1}) {
    const auto session = SessionReader::open(path.string());
    EXPECT_EQ(session.steps().size(), 6u) << path;
    // DDP's wrapper is looked through: its model's paths, and the all-reduce among the ops.
    const auto table = session.op_stats();
    EXPECT_FALSE(rows(table, "aten::linear", "0").empty()) << path;
    bool allreduce = false;
    for (const auto& r : table) allreduce |= r.name == "c10d::allreduce_";
    EXPECT_TRUE(allreduce) << path;
  }
  // One rank's file, opened alone, says it is one of several.
  const auto one = ampscope::test::ampscope(fmt::format("summary '{}'", rank1.string()));
  EXPECT_NE(one.output.find("rank 1 of 2 under torchrun (2 per machine)"), std::string::npos) << one.output;
  const auto summary =
      ampscope::test::ampscope(fmt::format("summary '{}' '{}'", rank0.string(), rank1.string()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("2 ranks"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("loss scale: the same on every rank at every step"), std::string::npos)
      << summary.output;
  // The same ranks as one HTML report (default name: ddp.ranks.html), collectives measured.
  const auto report = ampscope::test::ampscope(fmt::format("report '{}' '{}'", rank0.string(), rank1.string()));
  ASSERT_EQ(report.exit_code, 0) << report.output;
  std::ifstream in(dir_ / "ddp.ranks.html");
  const std::string html{std::istreambuf_iterator<char>(in), {}};
  EXPECT_NE(html.find("Distributed run, 2 ranks"), std::string::npos);
  EXPECT_NE(html.find("ddp.rank1.ampscope"), std::string::npos);
  EXPECT_NE(html.find("Collectives take up to"), std::string::npos);
}

}  // namespace
