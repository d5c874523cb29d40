// Backward checks of the built-in engine (issue #30): a crafted model marked as the
// built-in models mark theirs (ModuleScope::input/output), whose "root" block takes
// the square root of its input masked to the positive values: sqrt'(0) is inf, and
// the mask's gradient there is 0·inf = NaN, so root's input gradient is the first
// non-finite one, while its output gradient (and the later block's) stay finite. The store keeps the checks and the view sums them up.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/nn.h>

#include <string>
#include <vector>

#include "engine/module_scope.h"
#include "profiler/capture/activation_stats.h"
#include "profiler/capture/backward_checks.h"
#include "profiler/capture/step_module_sink.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_view.h"
#include "profiler/store/session_writer.h"
#include "tests/support/test_support.h"

namespace ampscope::profiler {
namespace {

std::string scope(const std::string& path) { return std::string(engine::kModuleScopePrefix) + path; }

struct CraftedModel {
  torch::nn::Linear fc1{8, 8}, fc2{8, 2};
  std::string fc1_scope = scope("fc1"), root_scope = scope("root"), fc2_scope = scope("fc2");
  bool overflow = true;
  at::Tensor forward(const at::Tensor& x) {
    at::Tensor h;
    {
      engine::ModuleScope s(fc1_scope);
      h = s.output(fc1->forward(s.input(x)));
    }
    {
      engine::ModuleScope s(root_scope);
      const at::Tensor& in = s.input(h);
      const at::Tensor masked = in * (in > 0).to(in.scalar_type());  // relu, by a product
      h = s.output(overflow ? at::sqrt(masked) : masked);
    }
    engine::ModuleScope s(fc2_scope);
    return s.output(fc2->forward(s.input(h)));
  }
};

std::optional<BackwardCheck> checked_step(CraftedModel& model, int64_t step, bool skipped) {
  BackwardCheckRecorder recorder;
  StepModuleSink sink;
  sink.backward = &recorder;
  {
    ActivationCapture capture(&sink);
    model.forward(at::randn({16, 8})).sum().backward();
  }
  return recorder.take(step, skipped);
}

// The crafted model in fp16, without its sqrt: the overflow comes from the scale the test gives.
void make_fp16(CraftedModel& model) {
  model.overflow = false;
  model.fc1->to(at::kHalf);
  model.fc2->to(at::kHalf);
}

engine::NamedTensors named_parameters(const CraftedModel& model) {
  engine::NamedTensors named;
  for (const auto& [layer, module] : {std::pair{"fc1", model.fc1}, std::pair{"fc2", model.fc2}})
    for (const auto& p : module->named_parameters()) named.emplace_back(std::string(layer) + "." + p.key(), p.value());
  return named;
}

size_t hook_count(const engine::NamedTensors& parameters) {
  size_t hooks = 0;
  for (const auto& [name, p] : parameters) hooks += torch::autograd::impl::hooks(p).size();
  return hooks;
}

TEST(BackwardChecks, TheModuleWhoseBackwardMadeTheFirstNonFiniteGradientIsNamed) {
  at::manual_seed(0);
  CraftedModel model;
  const auto check = checked_step(model, 7, true);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->step, 7);
  EXPECT_TRUE(check->skipped);
  EXPECT_TRUE(check->found());
  EXPECT_EQ(check->module, "root");  // not fc1, whose output gradient root's backward made non-finite
  EXPECT_EQ(check->side, GradientSide::kInput);
  // fc2's output and input (= root's output) came first and were finite.
  EXPECT_EQ(check->gradients, 3);  // the input x needs no gradient
  EXPECT_EQ(check->position, 2);
  EXPECT_EQ(check->nonfinite, 1);
}

// An fp16 model, its loss scaled by 8192: each of fc2's output gradients is 8192, finite
// in fp16, and so are the input gradients (8192 times weights below 1, summed over 2
// outputs), but fc2's bias gradient sums 16 of them over the batch: 131072, beyond
// fp16's 65504. A weight's gradient overflows where no activation's does: the parameter
// is named.
TEST(BackwardChecks, AParameterGradientThatOverflowsWhereNoActivationGradientDoesIsNamed) {
  at::manual_seed(0);
  CraftedModel model;
  make_fp16(model);
  const engine::NamedTensors parameters = named_parameters(model);
  const size_t hooks_before = hook_count(parameters);
  BackwardCheckRecorder recorder;
  recorder.set_parameters(parameters);
  StepModuleSink sink;
  sink.backward = &recorder;
  recorder.watch_parameters();
  EXPECT_EQ(hook_count(parameters), hooks_before + parameters.size());
  {
    ActivationCapture capture(&sink);
    (model.forward(at::randn({16, 8}, at::kHalf)).sum() * 8192).backward();
  }
  ASSERT_FALSE(at::isfinite(model.fc2->bias.grad()).all().item<bool>());  // what GradScaler would find
  ASSERT_TRUE(at::isfinite(model.fc1->bias.grad()).all().item<bool>());
  const auto check = recorder.take(5, true);
  ASSERT_TRUE(check);
  ASSERT_TRUE(check->found());
  EXPECT_EQ(check->side, GradientSide::kParameter);
  EXPECT_TRUE(check->module == "fc2.bias" || check->module == "fc2.weight") << check->module;
  EXPECT_EQ(check->gradients, 3 + 4);  // the three activation gradients, and the four parameters'
  // The hooks were for that step: the parameters' own hook lists are as they were, and a
  // backward after it tests nothing.
  EXPECT_EQ(hook_count(parameters), hooks_before);
  model.forward(at::randn({16, 8}, at::kHalf)).sum().backward();
  EXPECT_FALSE(recorder.take(6, false));
  BackwardInfSummary summary = summarize_backward_checks({*check});
  EXPECT_EQ(backward_inf_text(summary),
            "the first non-finite gradient in backward was parameter " + check->module +
                "'s gradient (a sum over the batch: it overflows where the activations' gradients need not) at step 5; "
                "the 1 checked step (1 skipped by GradScaler) had one");
}

// The same fp16 model, its output summed in fp32 and scaled by 1e5: each output gradient
// is 1e5 in fp32, beyond fp16's 65504 as it is cast into fp16 at fc2's output. No module's
// backward made it: it arrived, as an fp16 gradient, which the sentence says.
TEST(BackwardChecks, AnFp16GradientThatArrivesNonFiniteAtAnOutputSaysSo) {
  at::manual_seed(0);
  CraftedModel model;
  make_fp16(model);
  const auto check = [&] {
    BackwardCheckRecorder recorder;
    StepModuleSink sink;
    sink.backward = &recorder;
    {
      ActivationCapture capture(&sink);
      (model.forward(at::randn({16, 8}, at::kHalf)).to(at::kFloat).sum() * 1e5).backward();
    }
    return recorder.take(2, true);
  }();
  ASSERT_TRUE(check && check->found());
  EXPECT_EQ(check->module, "fc2");
  EXPECT_EQ(check->side, GradientSide::kOutput);
  EXPECT_EQ(check->dtype, "float16");
  EXPECT_EQ(backward_inf_text(summarize_backward_checks({*check})),
            "the first non-finite gradient in backward arrived at fc2's output as an fp16 gradient (from the loss or "
            "code between modules, where fp16 holds at most 65504) at step 2; the 1 checked step (1 skipped by "
            "GradScaler) had one");
}

TEST(BackwardChecks, FiniteGradientsNameNoModule) {
  at::manual_seed(0);
  CraftedModel model;
  model.overflow = false;
  const auto check = checked_step(model, 3, false);
  ASSERT_TRUE(check);
  EXPECT_FALSE(check->found());
  EXPECT_EQ(check->module, "");
  EXPECT_EQ(check->gradients, 3);
}

TEST(BackwardChecks, NothingMarkedNothingChecked) {
  BackwardCheckRecorder recorder;
  EXPECT_FALSE(recorder.take(1, false));
  ASSERT_EQ(engine::activation_sink(), nullptr);  // without a sink the scopes only pass tensors through
  at::manual_seed(0);
  CraftedModel model;
  EXPECT_EQ(model.forward(at::ones({1, 8})).sizes(), (std::vector<int64_t>{1, 2}));
}

TEST(BackwardChecks, StoreKeepsThemAndTheViewSumsThemUp) {
  test::ScratchDir dir;
  const std::string path = dir / "b.ampscope";
  at::manual_seed(0);
  CraftedModel model;
  std::vector<BackwardCheck> checks;
  checks.push_back(*checked_step(model, 4, true));
  model.overflow = false;
  checks.push_back(*checked_step(model, 10, false));
  model.overflow = true;
  checks.push_back(*checked_step(model, 12, true));
  {
    auto writer = SessionWriter::create(path, SessionMeta{});
    writer->append_backward_checks(std::vector<BackwardCheck>(checks));
    writer->close();
    ASSERT_EQ(writer->last_error(), "");
  }
  const auto back = SessionReader::open(path).backward_checks();
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].step, checks[i].step);
    EXPECT_EQ(back[i].skipped, checks[i].skipped);
    EXPECT_EQ(back[i].module, checks[i].module);
    EXPECT_EQ(back[i].side, checks[i].side);
    EXPECT_EQ(back[i].gradients, checks[i].gradients);
    EXPECT_EQ(back[i].nonfinite, checks[i].nonfinite);
    EXPECT_EQ(back[i].position, checks[i].position);
    EXPECT_EQ(back[i].dtype, checks[i].dtype);
  }
  EXPECT_EQ(back[0].dtype, "float32");  // root's input gradient: the crafted model is fp32
  const BackwardInfSummary s = load_session_view(path).backward_inf;
  EXPECT_EQ(s.checked_steps, 3);
  EXPECT_EQ(s.checked_skipped_steps, 2);
  EXPECT_EQ(s.steps_with_nonfinite, 2);
  ASSERT_TRUE(s.first);
  EXPECT_EQ(s.first->step, 4);
  ASSERT_EQ(s.origins.size(), 1u);
  EXPECT_EQ(s.origins[0].steps, 2);
  EXPECT_EQ(backward_inf_text(s),
            "the first non-finite gradient in backward came out of root's backward (its input gradient) at step 4; "
            "2 of the 3 checked steps (2 skipped by GradScaler) had one");
  // A file from before the dtype column: read as not known, the rest as it was.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "ALTER TABLE backward_checks DROP COLUMN dtype", nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  const auto old = SessionReader::open(path).backward_checks();
  ASSERT_EQ(old.size(), 3u);
  EXPECT_EQ(old[0].dtype, "");
  EXPECT_EQ(old[0].module, "root");
}

}  // namespace
}  // namespace ampscope::profiler
