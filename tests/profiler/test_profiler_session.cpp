// The whole profiler on a CPU training run: the session file it leaves and the
// snapshots a live viewer gets.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string_view>

#include "engine/device.h"
#include "engine/trainer.h"
#include "profiler/capture/profiler.h"
#include "profiler/op_sampling_rule.h"
#include "profiler/process_identity.h"
#include "profiler/recording_health.h"
#include "profiler/session_meta_keys.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_view.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_configs.h"
#include "tests/support/wait_until.h"

namespace ampscope::profiler {
namespace {

engine::TrainConfig gpt_bf16(int64_t steps) { return test::tiny_gpt(engine::Precision::kBF16, steps); }

TEST(Profiler, SessionHoldsStepsOpsGradientsAndTheOpTable) {
  test::ScratchDir dir;
  ProfilerOptions options;
  options.session_path = (dir / "s.ampscope").string();
  options.capture.window_start = 2;
  options.capture.window_steps = 4;
  options.capture.every_n_steps = 2;  // steps 2 and 4
  options.capture.gradient_every = 3;
  options.capture.sample_budget_percent = 0;  // every K steps exactly, whatever they cost
  {
    Profiler profiler(options);
    engine::Trainer trainer(gpt_bf16(7));
    trainer.add_observer(&profiler);
    trainer.start();
    trainer.wait();
    ASSERT_EQ(trainer.state(), engine::RunState::kFinished) << trainer.error_message();
    EXPECT_EQ(profiler.gpu_tracing().rfind("off: training on the CPU", 0), 0u) << profiler.gpu_tracing();
    const auto snap = profiler.snapshot();
    EXPECT_EQ(snap->step, 7);
    EXPECT_FALSE(snap->op_stats.empty());
    EXPECT_FALSE(snap->latest_gradients.empty());
    EXPECT_EQ(snap->latest_gradients.front().step, 6);
    EXPECT_EQ(snap->backward_inf.checked_steps, 2);  // the live view has the backward checks too
  }
  const auto session = SessionReader::open(options.session_path);
  EXPECT_EQ(session.steps().size(), 7u);
  // Activation ranges at the gradient-sampled steps (3, 6): the GPT's module
  // outputs in the order they finished, the first block's layer norm first.
  EXPECT_EQ(session.activation_steps(), (std::vector<int64_t>{3, 6}));
  const auto activations = session.activations(6);
  ASSERT_FALSE(activations.empty());
  EXPECT_EQ(activations.front().module, "tok_emb");
  EXPECT_EQ(activations.back().module, "head");
  bool block_after_its_mlp = false;
  for (size_t i = 1; i < activations.size(); ++i)
    block_after_its_mlp = block_after_its_mlp ||
                          (activations[i].module == "blocks.0" && activations[i - 1].module == "blocks.0.mlp");
  EXPECT_TRUE(block_after_its_mlp);
  EXPECT_FALSE(session.first_fp16_overflow());  // a healthy bf16 run
  // Its backward passes were checked at the same steps (no step was skipped, so no
  // other): every module input and output gradient finite.
  const auto checks = session.backward_checks();
  ASSERT_EQ(checks.size(), 2u);
  for (const auto& c : checks) {
    EXPECT_TRUE(c.step == 3 || c.step == 6) << c.step;
    EXPECT_GT(c.gradients, 10);  // the GPT's blocks, their attention and MLP, ln_f, head
    EXPECT_FALSE(c.found());
  }
  EXPECT_EQ(session.meta().precision, "bf16");
  EXPECT_EQ(session.meta_value("final_state").value_or(""), "finished");
  std::set<int64_t> op_steps;
  for (const auto& op : session.ops()) op_steps.insert(op.step);
  EXPECT_EQ(op_steps, (std::set<int64_t>{2, 4}));
  // Saved with the op table: the steps it covers (per-step times divide by it), and
  // the recording process (the Chrome trace's pid; the GUI follows a live session by it).
  EXPECT_EQ(session.meta_value(meta_key::kProfiledSteps).value_or(""), "2");
  EXPECT_EQ(session.meta_value(meta_key::kPid).value_or(""), std::to_string(current_process_id()));
  EXPECT_EQ(session.meta_value(meta_key::kHost).value_or(""), current_host_name());
  // A CPU run records which kernels multiply bf16/fp16 matrices here: the verdict's
  // reason for a slow CPU bf16 run, written as the engine found it.
  const auto paths = engine::cpu_matmul_paths();
  const auto path_text = [](bool onednn) { return onednn ? kCpuMatmulOneDnn : kCpuMatmulFallback; };
  EXPECT_EQ(session.meta().cpu_isa, paths.isa);
  EXPECT_FALSE(paths.isa.empty());
  EXPECT_EQ(session.meta().cpu_bf16_matmul, path_text(paths.onednn_bf16));
  EXPECT_EQ(session.meta().cpu_fp16_matmul, path_text(paths.onednn_fp16));
  const auto rows = session.op_stats();
  bool demoted_linear = false, kept_loss = false;
  for (const auto& r : rows) {
    demoted_linear = demoted_linear || (r.name == "aten::linear" && r.category == OpCategory::kDemoted && r.top_level &&
                                        r.cast_calls > 0 && r.calls == 2);
    kept_loss = kept_loss || (r.name == "aten::cross_entropy_loss" && r.category == OpCategory::kKeptFp32);
    // Autograd's containers hold the backward ops; counting them would count those twice.
    if (r.name.rfind("autograd::engine::evaluate_function", 0) == 0 || r.name.find("Backward") != std::string::npos) {
      EXPECT_FALSE(r.top_level) << r.name;
    }
    if (r.name == "aten::linear" && r.category == OpCategory::kDemoted) {
      EXPECT_TRUE(r.tensor_core_eligible) << "bf16 linear is a Tensor Core candidate";
    }
  }
  EXPECT_TRUE(demoted_linear);
  EXPECT_TRUE(kept_loss);
  EXPECT_EQ(session.gradient_steps(), (std::vector<int64_t>{3, 6}));
  const auto grads = session.latest_gradients();
  ASSERT_FALSE(grads.empty());
  for (const auto& g : grads) {
    int64_t in_histogram = 0;
    for (auto c : g.log2_histogram) in_histogram += c;
    EXPECT_EQ(in_histogram, g.numel - static_cast<int64_t>(g.zero_fraction * g.numel + 0.5)) << g.parameter;
  }
}

// `profile --steps 4` with range samples every 10 steps: the run's last step samples, so
// a short run has its gradient and activation ranges; the live view and the session say so.
TEST(Profiler, ARunEndingBeforeItsFirstRangeSampleSamplesItsLastStep) {
  test::ScratchDir dir;
  ProfilerOptions options;
  options.session_path = (dir / "s.ampscope").string();
  options.capture.gradient_every = 10;
  {
    Profiler profiler(options);
    engine::Trainer trainer(gpt_bf16(4));
    trainer.add_observer(&profiler);
    trainer.start();
    trainer.wait();
    ASSERT_EQ(trainer.state(), engine::RunState::kFinished) << trainer.error_message();
    const auto snap = profiler.snapshot();
    ASSERT_FALSE(snap->latest_gradients.empty());
    EXPECT_EQ(snap->latest_gradients.front().step, 4);
    EXPECT_NE(snap->range_sampling.find("the run's last step (4) too, as the run ends before step 10"),
              std::string::npos)
        << snap->range_sampling;
  }
  const auto session = SessionReader::open(options.session_path);
  EXPECT_EQ(session.gradient_steps(), (std::vector<int64_t>{4}));
  EXPECT_EQ(session.activation_steps(), (std::vector<int64_t>{4}));
  EXPECT_EQ(session.meta_value(meta_key::kRangeSampleLastStep).value_or(""), "4");
}

// A script that does not clip has no gradient norm per step; the range samples' total norm
// (SessionView::sampled_gradient_norms) stands in for it at the sampled steps. Its peer is the trainer's
// own norm (torch.nn.utils.clip_grad_norm_'s arithmetic, computed apart by ATen ops), taken at
// the same point: after unscale_, before clipping (a max norm far below the norm clips every
// step, so a sample read after the clipping would differ). fp16 at a scale of 2^24 overflows
// first: that step's norm is inf in both.
TEST(Profiler, TheRangeSamplesGradientNormIsTheTrainersOwnAtTheSameSteps) {
  test::ScratchDir dir;
  ProfilerOptions options;
  options.session_path = (dir / "s.ampscope").string();
  options.capture.gradient_every = 1;
  options.capture.sample_budget_percent = 0;
  engine::TrainConfig config = test::tiny_gpt(engine::Precision::kFP16, 8);
  config.clip_grad_norm = 1e-3;
  config.scaler.init_scale = 16777216.0;  // 2^24 overflows; backed off to 2^8, no more
  config.scaler.backoff_factor = 1.0 / 65536.0;
  {
    Profiler profiler(options);
    engine::Trainer trainer(config);
    trainer.add_observer(&profiler);
    trainer.start();
    trainer.wait();
    ASSERT_EQ(trainer.state(), engine::RunState::kFinished) << trainer.error_message();
  }
  const SessionView view = load_session_view(options.session_path);
  ASSERT_EQ(view.sampled_gradient_norms.size(), 8u);
  std::map<int64_t, double> trainer_norm;
  for (const StepRecord& s : view.steps) trainer_norm[s.step] = s.grad_norm;
  int finite = 0, overflowed = 0;
  for (const SampledGradientNorm& g : view.sampled_gradient_norms) {
    const double expected = trainer_norm.at(g.step);
    if (!std::isfinite(expected)) {
      EXPECT_EQ(g.norm, std::numeric_limits<double>::infinity()) << "step " << g.step;
      ++overflowed;
      continue;
    }
    EXPECT_GT(expected, 10 * config.clip_grad_norm);  // clipped at every finite step
    EXPECT_NEAR(g.norm, expected, 1e-4 * expected) << "step " << g.step;
    ++finite;
  }
  EXPECT_GT(finite, 0);
  EXPECT_GT(overflowed, 0);
  // Said as a range: first, last, and the count of samples that overflowed.
  const std::string text = sampled_gradient_norm_text(view.sampled_gradient_norms);
  EXPECT_NE(text.find("(8 range-sampled steps; inf/NaN at " + std::to_string(overflowed) + " of them)"),
            std::string::npos)
      << text;
}

// A range sample is the profiler's own work on the training's device: where it runs out
// of device memory (its batched passes hold up to some 500 MB at once, more than a
// training near the device's limit leaves), the training must go on. The sample is
// dropped, range samples stop, and the session says at which step and why. The device
// is faked by the sample's fault seam throwing what CUDA's allocator throws, at step 4's
// gradient statistics (the second sample), after its forward gathered activations.
TEST(Profiler, ARangeSampleThatRunsOutOfDeviceMemoryStopsTheSamplesNotTheTraining) {
  test::ScratchDir dir;
  ProfilerOptions options;
  options.session_path = (dir / "s.ampscope").string();
  options.capture.gradient_every = 2;
  options.capture.sample_budget_percent = 0;
  std::map<std::string, int> runs;  // part -> times it ran
  options.sample_fault_for_tests = [&runs](std::string_view part) {
    if (++runs[std::string(part)] == 2 && part == "gradient statistics")
      TORCH_CHECK_WITH(OutOfMemoryError, false, "CUDA out of memory. Tried to allocate 512.00 MiB");
  };
  {
    Profiler profiler(options);
    engine::Trainer trainer(gpt_bf16(8));
    trainer.add_observer(&profiler);
    trainer.start();
    trainer.wait();
    ASSERT_EQ(trainer.state(), engine::RunState::kFinished) << trainer.error_message();
    EXPECT_EQ(profiler.health().range_samples_stopped_step, 4);  // the live view says so too
  }
  EXPECT_EQ(runs["gradient statistics"], 2) << "a sample ran after one failed";
  const auto session = SessionReader::open(options.session_path);
  EXPECT_EQ(session.steps().size(), 8u);
  EXPECT_EQ(session.gradient_steps(), (std::vector<int64_t>{2}));
  EXPECT_EQ(session.activation_steps(), (std::vector<int64_t>{2})) << "step 4's partial sample was kept";
  const RecordingHealth health = recording_health_from_meta(session.meta_values());
  EXPECT_EQ(health.range_samples_stopped_step, 4);
  EXPECT_EQ(health.range_samples_stopped_why, "the gradient statistics ran out of device memory");
  EXPECT_NE(describe(health).find("range samples stopped at step 4: the gradient statistics ran out of device memory"),
            std::string::npos)
      << describe(health);
}

TEST(Profiler, AFailedRunStillClosesTheSession) {
  test::ScratchDir dir;
  ProfilerOptions options;
  options.session_path = (dir / "s.ampscope").string();
  engine::TrainConfig c = gpt_bf16(50);
  c.precision = engine::Precision::kFP32;
  c.optim.kind = engine::OptimizerKind::kSGD;
  c.optim.lr = 1e30;
  {
    Profiler profiler(options);
    engine::Trainer trainer(c);
    trainer.add_observer(&profiler);
    trainer.start();
    trainer.wait();
    ASSERT_EQ(trainer.state(), engine::RunState::kFailed);
  }
  const auto session = SessionReader::open(options.session_path);
  EXPECT_EQ(session.meta_value("final_state").value_or(""), "failed");
  EXPECT_NE(session.meta_value("final_message").value_or("").find("diverged"), std::string::npos);
  EXPECT_FALSE(session.steps().empty());
}

// Memory while the writer is behind is bounded in op records, not only in batches:
// a few batches of large steps hold a million records. With a limit of one record,
// the ops of the step before, still waiting for the worker or the writer when the
// next step begins, make the rule fall back; the session records it with the count
// and keeps exactly the steps the rule selected.
TEST(Profiler, OpRecordsWaitingBeyondTheLimitShedStepsByTheRecordedRule) {
  test::ScratchDir dir;
  ProfilerOptions options;
  options.session_path = (dir / "s.ampscope").string();
  options.op_backlog_limit = 1;
  constexpr int64_t kSteps = 30;
  {
    Profiler profiler(options);
    engine::Trainer trainer(gpt_bf16(kSteps));
    trainer.add_observer(&profiler);
    trainer.start();
    trainer.wait();
    ASSERT_EQ(trainer.state(), engine::RunState::kFinished) << trainer.error_message();
  }
  const auto session = SessionReader::open(options.session_path);
  EXPECT_EQ(session.steps().size(), static_cast<size_t>(kSteps));
  const std::string stored = session.meta_value(meta_key::kOpSamplingFallbacks).value_or("");
  const auto fallbacks = OpSamplingRule::decode(stored);
  ASSERT_TRUE(fallbacks.has_value()) << stored;
  ASSERT_FALSE(fallbacks->empty()) << "no step began with the step before's ops still waiting";
  const OpSamplingRule::Fallback& first = fallbacks->front();
  EXPECT_GE(first.ops_waiting, 1u);
  EXPECT_LT(first.backlog, options.queue_capacity / 2) << "the batch limit, not the op limit, fell back";
  const CaptureSettings& c = options.capture;
  const OpSamplingRule rule(c.window_start, c.window_steps, c.every_n_steps, *fallbacks);
  std::set<int64_t> selected;
  for (int64_t step = 1; step <= kSteps; ++step)
    if (rule.selects(step)) selected.insert(step);
  const auto op_steps = session.op_steps();
  EXPECT_EQ(std::set<int64_t>(op_steps.begin(), op_steps.end()), selected) << stored;
  EXPECT_LT(selected.size(), static_cast<size_t>(kSteps));
  const std::string said = describe(recording_health_from_meta(session.meta_values()));
  EXPECT_NE(said.find(std::to_string(first.ops_waiting) + " op records in "), std::string::npos) << said;
}

// What the worker took in last is shown and saved on time without another step after
// it: a paused run (or a loop between steps) showed the op table as it was up to 100 ms
// before the pause (empty, after fast first steps) and kept on disk the tables of up to
// 2 s before it, for as long as the pause lasted, since both waited for the next job.
TEST(Profiler, WhatCameLastIsShownAndSavedWithoutAnotherStep) {
  test::ScratchDir dir;
  ProfilerOptions options;
  options.session_path = (dir / "s.ampscope").string();
  options.capture.trace_gpu = false;
  options.capture.gradient_every = 0;
  options.table_save_interval = std::chrono::milliseconds(300);
  Profiler profiler(options);
  engine::RunStartedEvent run;
  run.device = "cpu";
  profiler.on_run_start(run);
  const at::Tensor a = at::ones({8, 8});
  auto step = [&](int64_t s) {  // one recorded op, then the step's end, as an engine hands them over
    profiler.on_step_begin(s);
    (void)a.mm(a);
    engine::StepEvent e;
    e.step = s;
    e.step_time_ms = 1.0;
    profiler.on_step_end(e);
  };
  auto stored_profiled_steps = [&] {
    return SessionReader::open(options.session_path).meta_value(meta_key::kProfiledSteps).value_or("");
  };
  step(1);
  // Its ops and its end came together: the first published, the end 100 ms later.
  EXPECT_TRUE(test::wait_until([&] { return profiler.snapshot()->step == 1; }, std::chrono::seconds(10)));
  step(2);  // within 100 ms of the last publish, and nothing after it
  EXPECT_TRUE(test::wait_until([&] { return profiler.snapshot()->step == 2; }, std::chrono::seconds(10)));
  auto mm_calls = [&] {
    for (const OpStats& row : profiler.snapshot()->op_stats)
      if (row.name == "aten::mm") return row.calls;
    return int64_t{0};
  };
  // Step 2's end leaves step 1, the warm-up, out of the table (warmup_step.h): step 2's mm alone.
  EXPECT_TRUE(test::wait_until([&] { return profiler.snapshot()->warmup_left_out.has_value(); },
                               std::chrono::seconds(10)));
  EXPECT_EQ(mm_calls(), 1);
  EXPECT_EQ(profiler.snapshot()->profiled_steps, 1);
  // On disk, while the run is still open (a kill now keeps step 2's ops, counted as one, and says
  // what step 1's took).
  const auto stored_warmup = [&] {
    return warmup_left_out_from_meta(SessionReader::open(options.session_path).meta_values()).has_value();
  };
  EXPECT_TRUE(test::wait_until([&] { return stored_profiled_steps() == "1" && stored_warmup(); },
                               std::chrono::seconds(10), std::chrono::milliseconds(20)))
      << stored_profiled_steps();
  const auto stored = SessionReader::open(options.session_path).meta_values();
  ASSERT_TRUE(warmup_left_out_from_meta(stored).has_value());
  EXPECT_EQ(warmup_left_out_from_meta(stored)->calls, 1);  // step 1's mm
  profiler.on_run_end(engine::RunState::kFinished, "");
}

}  // namespace
}  // namespace ampscope::profiler
