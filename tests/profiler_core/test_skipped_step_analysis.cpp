// Issue 30's two readings of a run's skipped steps, on hand-made records: where a
// non-finite gradient started in backward (locate_backward_inf), and LR schedulers
// that advanced after optimizer steps GradScaler skipped (summarize_schedulers);
// the store keeps scheduler calls as written.
#include <gtest/gtest.h>

// The cases name only the fields they set; the rest keep their defaults, as C++20's
// aggregate initialization guarantees. GCC 12 warns about it all the same.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <string>
#include <vector>

#include "profiler/analysis/backward_origin.h"
#include "profiler/analysis/scheduler_drift.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_view.h"
#include "profiler/store/session_writer.h"
#include "tests/support/test_support.h"

namespace ampscope::profiler {
namespace {

constexpr GradientSide kIn = GradientSide::kInput;
constexpr GradientSide kOut = GradientSide::kOutput;
constexpr GradientSide kParam = GradientSide::kParameter;

// Sequential(a, b, c) called as model: model.out == c.out, a.in == model.in.
const std::vector<std::string> kModules{"model", "a", "b", "c"};

TEST(BackwardOrigin, TheModuleWhoseBackwardMadeItIsNamedByItsInputGradient) {
  // Backward order: c.out/model.out, c.in/b.out, b.in/a.out (inf: b's backward made it).
  const std::vector<CheckedGradient> g{{true, {{3, kOut}, {0, kOut}}},
                                       {true, {{2, kOut}, {3, kIn}}},
                                       {false, {{1, kOut}, {2, kIn}}},
                                       {false, {{0, kIn}, {1, kIn}}}};
  const BackwardCheck c = locate_backward_inf(9, true, kModules, g);
  EXPECT_EQ(c.module, "b");
  EXPECT_EQ(c.side, kIn);
  EXPECT_EQ(c.position, 2);
  EXPECT_EQ(c.gradients, 4);
  EXPECT_EQ(c.nonfinite, 2);
  EXPECT_TRUE(c.skipped);
}

TEST(BackwardOrigin, OfModulesSharingTheInputTheInnermostIsNamed) {
  // a's backward made the model's input gradient inf: a and the model both took it as
  // input, but a's output gradient came after the model's (it is inside).
  const std::vector<CheckedGradient> g{{true, {{3, kOut}, {0, kOut}}},
                                       {true, {{2, kOut}, {3, kIn}}},
                                       {true, {{1, kOut}, {2, kIn}}},
                                       {false, {{0, kIn}, {1, kIn}}}};
  const BackwardCheck c = locate_backward_inf(1, false, kModules, g);
  EXPECT_EQ(c.module, "a");
  EXPECT_EQ(c.side, kIn);
}

TEST(BackwardOrigin, AGradientNoModuleTookAsInputArrivedAtAnOutput) {
  // The loss's gradient is already inf at the model's output.
  const std::vector<CheckedGradient> g{{false, {{3, kOut}, {0, kOut}}}, {false, {{2, kOut}, {3, kIn}}}};
  const BackwardCheck c = locate_backward_inf(2, true, kModules, g);
  EXPECT_EQ(c.module, "c");
  EXPECT_EQ(c.side, kOut);
  EXPECT_EQ(c.position, 0);
}

TEST(BackwardOrigin, AParameterGradientBeforeAnyNonFiniteActivationGradientIsNamed) {
  // c's backward: its input gradient finite, its weight's gradient (a sum over the batch)
  // inf; later b's input gradient is inf too. The weight came first.
  const std::vector<std::string> names{"model", "a", "b", "c", "c.weight", "a.weight"};
  const std::vector<CheckedGradient> g{{true, {{3, kOut}, {0, kOut}}},
                                       {false, {{4, kParam}}},
                                       {true, {{2, kOut}, {3, kIn}}},
                                       {false, {{1, kOut}, {2, kIn}}}};
  const BackwardCheck c = locate_backward_inf(3, true, names, g);
  EXPECT_EQ(c.module, "c.weight");
  EXPECT_EQ(c.side, kParam);
  EXPECT_EQ(c.position, 1);
  EXPECT_EQ(c.nonfinite, 2);
  // A parameter a module took as its input: that module's backward made its gradient.
  const std::vector<CheckedGradient> fed{{true, {{1, kOut}}}, {false, {{5, kParam}, {1, kIn}}}};
  const BackwardCheck f = locate_backward_inf(3, true, names, fed);
  EXPECT_EQ(f.module, "a");
  EXPECT_EQ(f.side, kIn);
  const BackwardInfSummary s = summarize_backward_checks({c});
  EXPECT_EQ(backward_inf_text(s),
            "the first non-finite gradient in backward was parameter c.weight's gradient (a sum over the batch: it "
            "overflows where the activations' gradients need not) at step 3; the 1 checked step (1 skipped by "
            "GradScaler) had one");
}

TEST(BackwardOrigin, ASkippedStepWhoseBackwardWasFiniteSaysTheInfAroseElsewhere) {
  const std::vector<CheckedGradient> g{{true, {{3, kOut}}}, {true, {{4, kParam}}}};
  const BackwardInfSummary s = summarize_backward_checks({locate_backward_inf(2, true, kModules, g)});
  EXPECT_EQ(backward_inf_text(s),
            "no non-finite gradient in the backward passes of the 1 checked step (1 skipped by GradScaler); the "
            "inf/NaN GradScaler found arose outside what was checked (code that changed the gradients after "
            "backward, or a parameter no module call was seen to use)");
}

TEST(BackwardOrigin, AllFiniteNamesNothingAndTheSummarySaysSo) {
  const std::vector<CheckedGradient> g{{true, {{3, kOut}}}, {true, {{2, kOut}, {3, kIn}}}};
  const BackwardCheck c = locate_backward_inf(2, false, kModules, g);
  EXPECT_FALSE(c.found());
  EXPECT_EQ(c.module, "");
  const BackwardInfSummary s = summarize_backward_checks({c});
  EXPECT_FALSE(s.first);
  EXPECT_EQ(backward_inf_text(s), "no non-finite gradient in the backward passes of the 1 checked step (0 skipped by "
                                  "GradScaler)");
  EXPECT_EQ(backward_inf_text(summarize_backward_checks({})), "");
}

TEST(BackwardOrigin, TheSummaryCountsOriginsAndTakesTheEarliestStep) {
  BackwardCheck late{.step = 9, .skipped = true, .gradients = 5, .nonfinite = 2, .module = "b", .side = kIn};
  BackwardCheck early = late;
  early.step = 4;
  BackwardCheck other = late;
  other.step = 6;
  other.module = "c";
  other.side = kOut;
  BackwardCheck clean;
  clean.step = 5;
  clean.gradients = 5;
  const BackwardInfSummary s = summarize_backward_checks({late, clean, early, other});
  ASSERT_TRUE(s.first);
  EXPECT_EQ(s.first->step, 4);
  EXPECT_EQ(s.checked_steps, 4);
  EXPECT_EQ(s.checked_skipped_steps, 3);
  EXPECT_EQ(s.steps_with_nonfinite, 3);
  ASSERT_EQ(s.origins.size(), 2u);
  EXPECT_EQ(s.origins[0].module, "b");
  EXPECT_EQ(s.origins[0].steps, 2);
  EXPECT_EQ(backward_inf_text(s),
            "the first non-finite gradient in backward came out of b's backward (its input gradient) at step 4; 3 "
            "of the 4 checked steps (3 skipped by GradScaler) had one; origins: b (input) 2, c (output) 1");
  // GradScaler skipped 5 steps over the run; the checks saw 3 of them.
  EXPECT_EQ(backward_inf_text(summarize_backward_checks({late, clean, early, other}, 5)),
            backward_inf_text(s) +
                "; 2 of GradScaler's 5 skipped steps were not checked (checks run on gradient-sampled steps and on "
                "the step after a skip or a growth of the scale)");
  EXPECT_EQ(backward_inf_text(summarize_backward_checks({late, clean, early, other}, 3)), backward_inf_text(s));
}

TEST(BackwardOrigin, SkippedStepsTheChecksDidNotSeeAreCountedWhateverTheChecksFound) {
  BackwardCheck clean;
  clean.step = 2;
  clean.gradients = 5;
  const std::string none = "no non-finite gradient in the backward passes of the 1 checked step (0 skipped by "
                           "GradScaler)";
  const std::string why = " (checks run on gradient-sampled steps and on the step after a skip or a growth of the "
                          "scale)";
  // A lone skip at step 1 (GradScaler's first scale too large), checked from step 2 on.
  EXPECT_EQ(backward_inf_text(summarize_backward_checks({clean}, 1)),
            none + "; GradScaler's skipped step was not checked" + why);
  EXPECT_EQ(backward_inf_text(summarize_backward_checks({clean}, 2)),
            none + "; none of GradScaler's 2 skipped steps was checked" + why);
  EXPECT_EQ(backward_inf_text(summarize_backward_checks({clean}, 0)), none);
  EXPECT_EQ(backward_inf_text(summarize_backward_checks({clean})), none);  // not known: said of none
}

OptimizerStepRecord optimizer_step(int64_t step, bool skipped) {
  OptimizerStepRecord r;
  r.step = step;
  r.name = "SGD";
  r.stepped = !skipped;
  r.found_inf = r.skipped = skipped;
  return r;
}

SchedulerStepRecord call(int64_t n, int32_t scheduler, const std::string& name, int64_t step, bool after_skipped) {
  return {.call = n, .scheduler = scheduler, .name = name, .optimizer = 0, .step = step,
          .after_skipped = after_skipped, .lr = 0.1 / static_cast<double>(n + 1)};
}

TEST(SchedulerDrift, APerStepSchedulerAfterSkippedStepsDriftsByTheirCount) {
  std::vector<OptimizerStepRecord> steps;
  std::vector<SchedulerStepRecord> calls;
  for (int64_t s = 1; s <= 10; ++s) {
    const bool skipped = s == 2 || s == 7;
    steps.push_back(optimizer_step(s, skipped));
    calls.push_back(call(s - 1, 0, "LinearLR", s, skipped));
  }
  calls.push_back(call(10, 1, "ReduceLROnPlateau", 7, true));  // once an "epoch", after a skipped step
  const auto summaries = summarize_schedulers(calls, steps);
  ASSERT_EQ(summaries.size(), 2u);
  const SchedulerSummary& per_step = summaries[0];
  EXPECT_EQ(per_step.name, "LinearLR");
  EXPECT_EQ(per_step.optimizer_name, "SGD");
  EXPECT_EQ(per_step.calls, 10);
  EXPECT_EQ(per_step.optimizer_steps, 10);
  EXPECT_EQ(per_step.after_skipped, 2);
  EXPECT_EQ(per_step.after_skipped_steps, (std::vector<int64_t>{2, 7}));
  EXPECT_TRUE(per_step.drifts());
  EXPECT_DOUBLE_EQ(per_step.last_lr, 0.01);
  EXPECT_EQ(scheduler_text(per_step), "LinearLR (optimizer 0, SGD): 10 steps, 2 after optimizer steps GradScaler "
                                      "skipped (steps 2, 7): its schedule runs 2 steps ahead of the optimizer's updates");
  const SchedulerSummary& epoch = summaries[1];
  EXPECT_EQ(epoch.after_skipped, 1);
  EXPECT_FALSE(epoch.drifts());  // an epoch schedule is not off by one skipped step
  EXPECT_NE(scheduler_text(epoch).find("as an epoch schedule does"), std::string::npos);
}

TEST(SchedulerDrift, TheStoreKeepsEveryCall) {
  test::ScratchDir dir;
  const std::string path = dir / "s.ampscope";
  std::vector<SchedulerStepRecord> calls{call(0, 0, "StepLR", 1, false), call(1, 0, "StepLR", 2, true)};
  {
    auto writer = SessionWriter::create(path, SessionMeta{});
    writer->append_optimizer_steps({optimizer_step(1, false), optimizer_step(2, true)});
    writer->append_scheduler_steps(std::vector<SchedulerStepRecord>(calls));
    writer->close();
    ASSERT_EQ(writer->last_error(), "");
  }
  const auto back = SessionReader::open(path).scheduler_steps();
  ASSERT_EQ(back.size(), 2u);
  for (size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].call, calls[i].call);
    EXPECT_EQ(back[i].scheduler, calls[i].scheduler);
    EXPECT_EQ(back[i].name, calls[i].name);
    EXPECT_EQ(back[i].optimizer, calls[i].optimizer);
    EXPECT_EQ(back[i].step, calls[i].step);
    EXPECT_EQ(back[i].after_skipped, calls[i].after_skipped);
    EXPECT_EQ(back[i].lr, calls[i].lr);
  }
  const SessionView view = load_session_view(path);
  ASSERT_EQ(view.schedulers.size(), 1u);
  EXPECT_TRUE(view.schedulers[0].drifts());
  EXPECT_EQ(view.schedulers[0].after_skipped, 1);
}

}  // namespace
}  // namespace ampscope::profiler
