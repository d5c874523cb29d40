// Precision readiness captured on a training run (issue #30): an MLP whose first
// layer puts out one feature a hundred times the others (an outlier channel) keeps
// the layer fed by it out of NVFP4, while the first layer, fed well-scaled data, is ready; the live view
// and the session agree; the profiler's own ops stay out of the op table.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/training_run.h"
#include "profiler/capture/own_work.h"
#include "profiler/capture/profiler.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_view.h"
#include "tests/support/dispatched_ops.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_configs.h"

namespace ampscope::profiler {
namespace {

constexpr int64_t kOutlierFeature = 40;

const LayerReadiness* find_layer(const std::vector<LayerReadiness>& layers, const std::string& name) {
  for (const LayerReadiness& l : layers)
    if (l.layer == name) return &l;
  return nullptr;
}

Readiness target(const LayerReadiness& l, QuantTarget t) { return l.targets[static_cast<int>(t)]; }

const QuantMetrics& metrics(const LayerReadiness& l, TensorRole role, QuantFormat f) {
  for (const TensorQuantization& t : l.tensors)
    if (t.role == role) return t.formats[static_cast<int>(f)];
  ADD_FAILURE() << l.layer << " has no " << tensor_role_key(role);
  static const QuantMetrics none;
  return none;
}

TEST(ReadinessCapture, AnOutlierChannelKeepsItsLayerOutOfNvfp4AndAWellScaledLayerIsReady) {
  test::ScratchDir dir;
  ProfilerOptions options;
  options.session_path = dir / "s.ampscope";
  options.capture.gradient_every = 2;  // steps 2 and 4
  options.capture.sample_budget_percent = 0;  // every K steps exactly, whatever they cost
  options.capture.readiness_every = 1;        // both samples
  engine::TrainConfig config = test::tiny_mlp(4, /*width=*/64, /*batch=*/32);
  config.model.layers = 2;
  engine::TrainingRun run(config);
  {
    // hidden.0's output feature 40 held near 100 by its bias, the others near 1: channel
    // 40 of hidden.1's input is an outlier on every token, as the "massive activations"
    // of large language models are (Sun et al. 2024).
    at::NoGradGuard no_grad;
    for (const auto& [name, p] : run.model().named_parameters())
      if (name == "hidden.0.bias") p[kOutlierFeature].fill_(100.0);
  }
  ReadinessTotals live;
  {
    Profiler profiler(options);
    profiler.on_run_start(run.started_event());
    for (int64_t step = 1; step <= config.steps; ++step) run.step(step, {&profiler});
    profiler.on_run_end(engine::RunState::kFinished, "");
    live = profiler.snapshot()->readiness;
  }
  const SessionReader session = SessionReader::open(options.session_path);
  const ReadinessTotals stored = session.readiness();
  EXPECT_EQ(stored.sampled_steps(), 2);
  EXPECT_EQ(stored.roles(), (std::vector<TensorRole>{TensorRole::weight, TensorRole::input_activation,
                                                      TensorRole::weight_gradient}));
  const std::vector<LayerReadiness> layers = stored.layers();
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0].layer, "hidden.0");  // in forward order
  EXPECT_EQ(layers[2].layer, "head");
  const LayerReadiness* well_scaled = find_layer(layers, "hidden.0");
  const LayerReadiness* outlier = find_layer(layers, "hidden.1");
  ASSERT_TRUE(well_scaled && outlier);
  ASSERT_EQ(outlier->tensors.size(), 3u);
  // Each sampled step measured the input once: 2 steps x 32 rows x 64 features.
  EXPECT_EQ(metrics(*outlier, TensorRole::input_activation, QuantFormat::nvfp4).elements, 2 * 32 * 64);

  // The outlier's 16-blocks flush their other 15 features in NVFP4.
  EXPECT_NE(target(*outlier, QuantTarget::nvfp4), Readiness::ready);
  const QuantMetrics& input_nvfp4 = metrics(*outlier, TensorRole::input_activation, QuantFormat::nvfp4);
  EXPECT_NE(readiness(QuantFormat::nvfp4, input_nvfp4), Readiness::ready) << describe_metrics(input_nvfp4);
  EXPECT_GT(input_nvfp4.flushed_share(), readiness_thresholds(QuantElement::e2m1).ready_flushed_share);
  EXPECT_EQ(target_reason(*outlier, QuantTarget::nvfp4).metric, ReadinessMetric::flushed);
  // FP8 and MXFP8 scale around it.
  EXPECT_EQ(target(*outlier, QuantTarget::fp8), Readiness::ready);
  EXPECT_EQ(target(*outlier, QuantTarget::mxfp8), Readiness::ready);

  for (QuantTarget t : {QuantTarget::fp8, QuantTarget::mxfp8, QuantTarget::nvfp4})
    EXPECT_EQ(target(*well_scaled, t), Readiness::ready)
        << quant_target_name(t) << ": " << describe_metrics(*target_reason(*well_scaled, t).metrics);
  EXPECT_EQ(well_scaled->best_target, QuantTarget::nvfp4);

  // The live view added up the same samples.
  const std::vector<LayerReadiness> live_layers = live.layers();
  ASSERT_EQ(live_layers.size(), layers.size());
  EXPECT_EQ(live.sampled_steps(), 2);
  EXPECT_EQ(live_layers[1].targets, layers[1].targets);
  EXPECT_EQ(metrics(live_layers[1], TensorRole::input_activation, QuantFormat::nvfp4).flushed, input_nvfp4.flushed);

  // The pass is the profiler's own work: none of its ops is in the user's op table.
  std::set<std::string> names;
  for (const OpStats& row : session.op_stats()) names.insert(row.name);
  EXPECT_TRUE(names.contains("aten::linear"));
  for (const char* own : {"aten::bitwise_and", "aten::exp2", "aten::nan_to_num_"}) EXPECT_FALSE(names.contains(own)) << own;
}

TEST(ReadinessCapture, MeasuredOnTheFirstRangeSampleAndOneInNAfterItWhileGradientsAreOnEvery) {
  engine::TrainConfig config = test::tiny_mlp(7, /*width=*/32, /*batch=*/8);
  for (const auto& [readiness_every, readiness_steps] :
       std::vector<std::pair<int64_t, int64_t>>{{3, 3}, {1, 7}, {0, 0}}) {
    test::ScratchDir dir;
    ProfilerOptions options;
    options.session_path = dir / "s.ampscope";
    options.capture.gradient_every = 1;  // a range sample every step: 7
    options.capture.sample_budget_percent = 0;
    options.capture.readiness_every = readiness_every;  // 3: steps 1, 4 and 7
    engine::TrainingRun run(config);
    {
      Profiler profiler(options);
      profiler.on_run_start(run.started_event());
      for (int64_t step = 1; step <= config.steps; ++step) {
        run.step(step, {&profiler});
        EXPECT_EQ(profiler.wants_readiness(), readiness_every > 0 && (step - 1) % readiness_every == 0) << step;
      }
      profiler.on_run_end(engine::RunState::kFinished, "");
    }
    const SessionReader session = SessionReader::open(options.session_path);
    EXPECT_EQ(session.readiness().sampled_steps(), readiness_steps) << "readiness every " << readiness_every;
    EXPECT_EQ(session.gradient_steps().size(), 7u) << "readiness every " << readiness_every;
    const SessionView view = load_session_view(session);
    EXPECT_NE(view.range_sampling.find(readiness_every == 3   ? "precision readiness on one sample in 3"
                                       : readiness_every == 1 ? "precision readiness on every sample"
                                                              : "precision readiness off"),
              std::string::npos)
        << view.range_sampling;
  }
}

TEST(ReadinessCapture, WithoutLayerInputsTheWeightsAreMeasured) {
  // A model whose layers the capture cannot see (TorchScript, compiled code): the
  // parameters named *.weight with two or more dimensions, and their gradients.
  ReadinessRecorder recorder;
  at::Tensor weight = at::randn({8, 16}).requires_grad_();
  at::Tensor bias = at::zeros({8}).requires_grad_();
  (at::linear(at::randn({4, 16}), weight, bias).sum()).backward();
  recorder.measure_gradients({{"fc.weight", weight}, {"fc.bias", bias}});
  const std::vector<ReadinessSample> samples = recorder.take(7);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].layer, "fc");
  EXPECT_EQ(samples[0].step, 7);
  EXPECT_EQ(samples[0].tensor.role, TensorRole::weight);
  EXPECT_EQ(samples[1].tensor.role, TensorRole::weight_gradient);
  EXPECT_EQ(samples[1].tensor.formats[0].elements, 8 * 16);
  EXPECT_TRUE(recorder.empty());
}

// A large layer input is measured on evenly spaced rows, at most 2^21 elements, with
// the tensorwise scales from all of it: here its one outlier sits in a row left out.
TEST(ReadinessCapture, ALargeLayerInputIsMeasuredOnSpacedRowsWithTheWholeTensorsAmax) {
  ReadinessRecorder recorder;
  at::Tensor input = at::randn({4096, 1024}) * 0.01;
  input.index_put_({1, 5}, 1000.0);  // row 1: every other row is measured
  recorder.on_layer_input("ampscope.module:fc", input, at::randn({16, 1024}));
  const std::vector<ReadinessSample> samples = recorder.take(1);
  const ReadinessSample* activation = nullptr;
  for (const ReadinessSample& s : samples)
    if (s.tensor.role == TensorRole::input_activation) activation = &s;
  ASSERT_NE(activation, nullptr);
  const QuantMetrics& tensorwise = activation->tensor.formats[static_cast<int>(QuantFormat::fp8_e4m3_tensorwise)];
  EXPECT_EQ(tensorwise.elements, 2048 * 1024);
  // The scale for amax 1000 (fp8's 448 / 1000: a group multiplier above 1), not the
  // measured rows' amax of some 0.05 (a multiplier near 2^-13).
  EXPECT_GT(tensorwise.scale_log2_max, 0.0);
}

// Eight inputs of 4M elements share one pass (2^21 measured each), where at 4M each
// they took two: the number of passes, not of layers, sets what a sample costs.
TEST(ReadinessCapture, LargeLayerInputsShareAPass) {
  const auto passes = [](int layers) {
    ReadinessRecorder recorder;
    const at::Tensor weight = at::randn({16, 1024});
    for (int i = 0; i < layers; ++i)
      recorder.on_layer_input("ampscope.module:fc" + std::to_string(i), at::randn({4096, 1024}), weight);
    EXPECT_EQ(recorder.take(1).size(), 2u * static_cast<size_t>(layers));
    return recorder.last_sample_passes();
  };
  EXPECT_EQ(passes(1), 1) << "the input with its weight";
  EXPECT_EQ(passes(8), 2) << "the eight inputs, then the weights (at 4M elements each: three passes)";
}

// A large weight and its gradient are measured on spaced rows too (2^21 elements each),
// their tensorwise scales from the whole tensors: with the input, one pass, where whole
// they took two.
TEST(ReadinessCapture, ALargeWeightAndItsGradientShareAPass) {
  ReadinessRecorder recorder;
  at::Tensor weight = at::randn({4096, 4096}).requires_grad_();
  weight.mutable_grad() = at::randn({4096, 4096}) * 1e-4;
  weight.mutable_grad().index_put_({1, 7}, 1.0);  // row 1: every 8th row is measured, from row 0
  recorder.on_layer_input("ampscope.module:head", at::randn({8, 4096}), weight);
  recorder.measure_gradients({{"head.weight", weight}});
  const std::vector<ReadinessSample> samples = recorder.take(1);
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(recorder.last_sample_passes(), 1);
  for (const ReadinessSample& s : samples) {
    const QuantMetrics& tensorwise = s.tensor.formats[static_cast<int>(QuantFormat::fp8_e4m3_tensorwise)];
    if (s.tensor.role == TensorRole::input_activation) {
      EXPECT_EQ(tensorwise.elements, 8 * 4096);
      continue;
    }
    EXPECT_EQ(tensorwise.elements, 512 * 4096) << tensor_role_key(s.tensor.role);
    // The gradient's multiplier for its amax of 1 (1 / 448: log2 -8.8), not for the
    // measured rows' amax of some 6e-4 (log2 -19.5).
    if (s.tensor.role == TensorRole::weight_gradient) {
      EXPECT_GT(tensorwise.scale_log2_max, -10.0);
    }
  }
}

// transformers' Conv1D (GPT-2's layers) holds its weight as [in, out] and computes x @ W:
// its weight and gradient must measure as the Linear weight [out, in] they equal, blocks
// and rowwise scales along the reduction dimension. One output unit a thousand times the
// others spreads the rowwise scales over ten binades; along the wrong dimension every
// row would hold one such value and the rows' scales would not spread.
TEST(ReadinessCapture, AConv1dWeightInByOutMeasuresAsTheLinearWeightItEquals) {
  at::manual_seed(3);
  at::Tensor linear = at::randn({48, 64});  // [out, in]
  linear.select(0, 5).mul_(1000.0);
  const at::Tensor input = at::randn({8, 64});
  const auto measure = [&](const at::Tensor& weight, bool in_by_out) {
    at::Tensor w = weight.clone().requires_grad_();
    w.mutable_grad() = weight * 1e-3;
    ReadinessRecorder recorder;
    if (in_by_out) recorder.note_in_by_out(w);
    recorder.on_layer_input("ampscope.module:fc", input, w);
    recorder.measure_gradients({{"fc.weight", w}});
    return recorder.take(1);
  };
  const std::vector<ReadinessSample> as_linear = measure(linear, /*in_by_out=*/false);
  const std::vector<ReadinessSample> as_conv1d = measure(linear.t().contiguous(), /*in_by_out=*/true);
  ASSERT_EQ(as_linear.size(), 3u);
  ASSERT_EQ(as_conv1d.size(), 3u);
  // Compiled code shows no layer inputs: the parameters named *.weight are measured,
  // a Conv1D's as noted when the capture mapped the model.
  {
    at::Tensor w = linear.t().contiguous().requires_grad_();
    w.mutable_grad() = linear.t().contiguous() * 1e-3;
    ReadinessRecorder recorder;
    recorder.note_in_by_out(w);
    recorder.measure_gradients({{"fc.weight", w}});
    const std::vector<ReadinessSample> compiled = recorder.take(1);
    ASSERT_EQ(compiled.size(), 2u);
    for (size_t i = 0; i < 2; ++i)
      for (int f = 0; f < kQuantFormatCount; ++f)
        EXPECT_EQ(compiled[i].tensor.formats[f].scale_log2_min, as_linear[2 * i].tensor.formats[f].scale_log2_min)
            << tensor_role_key(compiled[i].tensor.role) << " " << f;
  }
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(tensor_role_key(as_linear[i].tensor.role));
    EXPECT_EQ(as_conv1d[i].tensor.role, as_linear[i].tensor.role);
    for (int f = 0; f < kQuantFormatCount; ++f) {
      const QuantMetrics& a = as_conv1d[i].tensor.formats[f];
      const QuantMetrics& b = as_linear[i].tensor.formats[f];
      EXPECT_EQ(a.flushed, b.flushed);
      EXPECT_EQ(a.saturated, b.saturated);
      EXPECT_DOUBLE_EQ(a.noise, b.noise);
      EXPECT_EQ(a.scale_log2_min, b.scale_log2_min);
      EXPECT_EQ(a.scale_log2_max, b.scale_log2_max);
    }
    if (as_linear[i].tensor.role == TensorRole::input_activation) continue;
    const QuantMetrics& rowwise = as_conv1d[i].tensor.formats[static_cast<int>(QuantFormat::fp8_e4m3_rowwise)];
    EXPECT_GT(rowwise.scale_log2_max - rowwise.scale_log2_min, 9.0);
  }
}

// Where no layer input is seen (compiled code), the layers are found by their weights' names:
// "<layer>.weight", and nn.MultiheadAttention's in_proj_weight (q/k/v_proj_weight), which the
// Python capture names "<path>.in_proj" where it sees the input; no bias, no 1-D weight.
TEST(ReadinessCapture, WithoutLayerInputsMultiheadAttentionsProjectionWeightsAreLayersToo) {
  const auto parameter = [](std::initializer_list<int64_t> shape) {
    at::Tensor p = at::randn(shape).requires_grad_();
    p.mutable_grad() = at::randn(shape) * 1e-3;
    return p;
  };
  ReadinessRecorder recorder;
  recorder.measure_gradients({{"attn.in_proj_weight", parameter({96, 32})},
                              {"attn.in_proj_bias", parameter({96})},
                              {"attn.out_proj.weight", parameter({32, 32})},
                              {"cross.k_proj_weight", parameter({32, 8})},
                              {"norm.weight", parameter({32})},
                              {"attn.bias_k", parameter({1, 1, 32})}});
  std::vector<std::string> layers;
  for (const ReadinessSample& s : recorder.take(1))
    if (layers.empty() || layers.back() != s.layer) layers.push_back(s.layer);
  EXPECT_EQ(layers, (std::vector<std::string>{"attn.in_proj", "attn.out_proj", "cross.k_proj"}));
}

// Where the capture noted the model's GEMM weights as it mapped it (the Python capture), those are
// the layers without layer inputs, under the noted names: a head tied to the token embedding is
// "lm_head" (the optimizer calls the tensor "tok_emb.weight"), a position embedding is no layer.
TEST(ReadinessCapture, WithoutLayerInputsTheNotedGemmWeightsAreTheLayersUnderTheirNames) {
  const auto parameter = [](std::initializer_list<int64_t> shape) {
    at::Tensor p = at::randn(shape).requires_grad_();
    p.mutable_grad() = at::randn(shape) * 1e-3;
    return p;
  };
  const at::Tensor tok_emb = parameter({50, 16}), pos_emb = parameter({8, 16}), fc = parameter({16, 16});
  const engine::NamedTensors parameters = {
      {"tok_emb.weight", tok_emb}, {"pos_emb.weight", pos_emb}, {"blocks.0.fc.weight", fc}};
  const auto layers_of = [&](ReadinessRecorder& recorder) {
    recorder.measure_gradients(parameters);
    std::vector<std::string> layers;
    for (const ReadinessSample& s : recorder.take(1))
      if (layers.empty() || layers.back() != s.layer) layers.push_back(s.layer);
    return layers;
  };
  ReadinessRecorder noted;
  noted.note_gemm_weight("lm_head", tok_emb);
  noted.note_gemm_weight("blocks.0.fc", fc);
  EXPECT_EQ(layers_of(noted), (std::vector<std::string>{"lm_head", "blocks.0.fc"}));
  EXPECT_EQ(layers_of(noted), (std::vector<std::string>{"lm_head", "blocks.0.fc"}));  // kept across samples
  ReadinessRecorder unnoted;  // the built-in engine's TorchScript models: by name
  EXPECT_EQ(layers_of(unnoted), (std::vector<std::string>{"tok_emb", "pos_emb", "blocks.0.fc"}));
}

TEST(ReadinessCapture, MicroBatchesAddUpAndATiedWeightIsFoundByWhatItIs) {
  // A head that shares the embedding's weight (GPT's tied head): the optimizer names
  // the parameter tok_emb.weight, the forward saw it as the head's; two micro-batches.
  ReadinessRecorder recorder;
  at::Tensor weight = at::randn({8, 16}).requires_grad_();
  for (int micro = 0; micro < 2; ++micro) {
    const at::Tensor x = at::randn({4, 16});
    recorder.on_layer_input("ampscope.module:head", x, weight);
    at::linear(x, weight).sum().backward();
  }
  recorder.measure_gradients({{"tok_emb.weight", weight}});
  const std::vector<ReadinessSample> samples = recorder.take(3);
  ASSERT_EQ(samples.size(), 3u);
  for (const ReadinessSample& s : samples) EXPECT_EQ(s.layer, "head");
  EXPECT_EQ(samples[0].tensor.role, TensorRole::weight);
  EXPECT_EQ(samples[1].tensor.role, TensorRole::input_activation);
  EXPECT_EQ(samples[1].tensor.formats[0].elements, 2 * 4 * 16);
  EXPECT_EQ(samples[2].tensor.role, TensorRole::weight_gradient);
}

// A sampled step of a CPU MLP hands the recorder three tensors per layer; each ATen op
// it dispatched per tensor (a detach, a reshape, a row read back) was microseconds on
// the training thread, and a pass's own 640 small ops were most of a 64-layer sample
// (issue 27). The ops of a sample must not grow with the layers.
TEST(ReadinessCapture, OneCpuSampleDispatchesAsManyOpsForSixtyFourLayersAsForFour) {
  const auto sample_ops = [](int layers) {
    std::vector<at::Tensor> weights;
    std::vector<std::pair<std::string, at::Tensor>> parameters;
    for (int i = 0; i < layers; ++i) {
      weights.push_back(at::randn({32, 32}).requires_grad_());
      weights.back().mutable_grad() = at::randn({32, 32}) * 1e-3;
      parameters.emplace_back("fc" + std::to_string(i) + ".weight", weights.back());
    }
    at::Tensor x = at::randn({16, 32});
    const bool recorded = OwnWork::recorded_on_this_thread();
    OwnWork::recorded_on_this_thread() = true;  // the recorder's own ops, counted
    ReadinessRecorder recorder;
    int64_t count = 0;
    {
      test::DispatchedOps ops;
      for (int i = 0; i < layers; ++i) {
        recorder.on_layer_input("ampscope.module:fc" + std::to_string(i), x, weights[i]);
        {
          at::DisableRecordFunctionGuard model;  // the model's own forward: not counted
          x = at::tanh(at::linear(x, weights[i].detach()));
        }
      }
      const int64_t forward = ops.count();
      recorder.measure_gradients(parameters);
      EXPECT_EQ(recorder.take(1).size(), 3u * static_cast<size_t>(layers));
      count = ops.count() - forward;
      EXPECT_EQ(forward, 0) << "handing over a layer's input dispatches nothing";
    }
    OwnWork::recorded_on_this_thread() = recorded;
    return count;
  };
  const int64_t four = sample_ops(4);
  EXPECT_GT(four, 0) << "the counting callback saw nothing";
  EXPECT_EQ(sample_ops(64), four);
}

}  // namespace
}  // namespace ampscope::profiler
