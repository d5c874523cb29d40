// Models nobody here wrote (torchvision resnet18, transformers GPT-2 and Llama from a config,
// torch.nn.LSTM), trained on the CPU by tests/python/peer_training.py: `ampscope run`'s op table has
// the input dtypes PyTorch's own profiler (record_shapes=True) records for the same
// script, and the module paths of the models' own submodules; precision readiness
// measures every GEMM layer, transformers' Conv1D (GPT-2's attention and MLP) among them;
// and with every sample on, each loss and the trained weights are the peer run's, to the bit.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "profiler/store/session_reader.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::profiler::OpCategory;
using ampscope::profiler::SessionReader;
using ampscope::test::ScratchDir;
using Signatures = std::map<std::string, std::set<std::vector<std::string>>>;

// ampscope's dtype names in the profiler's spellings; "" (not a tensor) and lists' own
// entries are dropped as the peer drops them.
std::optional<std::string> profiler_spelling(std::string dtype) {
  if (dtype.rfind("wrapped:", 0) == 0) dtype = dtype.substr(8);
  static const std::map<std::string, std::string> names{{"float32", "float"}, {"float16", "c10::Half"},
                                                        {"bfloat16", "c10::BFloat16"}, {"int64", "long int"},
                                                        {"int32", "int"}, {"bool", "bool"}, {"float64", "double"}};
  const auto it = names.find(dtype);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

// An op in a module whose top-level calls have the category (aten::linear demoted in lm_head).
struct Decided {
  std::string op, module;
  OpCategory category;
};

// readiness_weights: layers precision readiness must measure, with their weight's elements.
void compare_with_torch_profiler(const std::string& model, const std::set<std::string>& ops,
                                 const std::vector<Decided>& decided,
                                 const std::map<std::string, int64_t>& readiness_weights) {
  ScratchDir dir;
  const auto script = ampscope::test::test_source_path("python/peer_training.py");
  const auto session = dir / "s.ampscope";
  const auto r = ampscope::test::ampscope(
      fmt::format("run --out '{}' --grad-every 1 --sample-budget 0 --readiness-every 1 '{}' {} --steps 2 "
                  "--digest '{}'",
                  session.string(), script.string(), model, (dir / "ours.txt").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto peer_json = dir / "peer.json";
  std::string out;
  ASSERT_EQ(ampscope::test::run_command(fmt::format("'{}' '{}' {} --steps 2 --torch-profiler '{}' --digest '{}' 2>&1",
                                                    *ampscope::test::python_with_torch(), script.string(), model,
                                                    peer_json.string(), (dir / "peer.txt").string()),
                                        &out),
            0)
      << out;
  // Every sample on (gradients, activations, readiness), the training is the script's own:
  // each step's loss and the trained weights, to the bit.
  EXPECT_EQ(ampscope::test::read_file(dir / "ours.txt"), ampscope::test::read_file(dir / "peer.txt"));
  std::ifstream in(peer_json);
  const auto peer_all = nlohmann::json::parse(in);

  const auto reader = SessionReader::open(session.string());
  Signatures ours, peer;
  for (const auto& op : reader.ops()) {
    if (!ops.count(op.name)) continue;
    std::vector<std::string> types;
    for (const auto& d : op.input_dtypes)
      if (auto t = profiler_spelling(d)) types.push_back(*t);
    ours[op.name].insert(types);
  }
  for (const auto& name : ops) {
    ASSERT_TRUE(peer_all.contains(name)) << name << " not in the torch.profiler trace";
    for (const auto& call : peer_all[name]) peer[name].insert(call.get<std::vector<std::string>>());
    EXPECT_EQ(ours[name], peer[name]) << name;
  }
  const auto table = reader.op_stats();
  for (const auto& [op, module, category] : decided) {
    std::set<OpCategory> categories;
    for (const auto& row : table)
      if (row.top_level && row.name == op && row.module == module) categories.insert(row.category);
    EXPECT_EQ(categories, std::set<OpCategory>{category}) << op << " in " << module;
  }
  EXPECT_EQ(reader.steps().size(), 2u);
  // Throughput from the batch of 4 the model was given, by position (resnet18(x)) or by
  // keyword (model(input_ids=x, labels=y), as HF's models are called).
  for (const auto& s : reader.steps())
    EXPECT_NEAR(s.samples_per_second, 4 * 1000.0 / s.step_time_ms, 1e-6 * s.samples_per_second) << "step " << s.step;
  EXPECT_FALSE(reader.latest_gradients().empty());

  std::map<std::string, int64_t> measured;  // layer: its weight's elements over the sampled steps
  for (const auto& layer : reader.readiness().layers())
    for (const auto& t : layer.tensors)
      if (t.role == ampscope::profiler::TensorRole::weight) measured[layer.layer] = t.formats[0].elements;
  for (const auto& [layer, elements] : readiness_weights) {
    ASSERT_TRUE(measured.contains(layer)) << layer << " not measured for precision readiness";
    EXPECT_EQ(measured[layer], 2 * elements) << layer << ": two sampled steps";
  }
}

class PeerModels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ampscope::test::python_peers_installed())
      GTEST_SKIP() << "torchvision and transformers are not installed (PYTHON_TEST_PACKAGES)";
  }
};

TEST_F(PeerModels, TorchvisionResnet18Bf16OpDtypesEqualTorchProfilers) {
  compare_with_torch_profiler("resnet18",
                              {"aten::conv2d", "aten::batch_norm", "aten::relu_", "aten::max_pool2d", "aten::add_",
                               "aten::adaptive_avg_pool2d", "aten::linear", "aten::cross_entropy_loss",
                               "aten::convolution_backward", "aten::native_batch_norm_backward"},
                              {{"aten::conv2d", "layer1.0.conv1", OpCategory::kDemoted},
                               {"aten::linear", "fc", OpCategory::kDemoted}},
                              {{"conv1", 64 * 3 * 7 * 7}, {"layer1.0.conv1", 64 * 64 * 3 * 3}, {"fc", 10 * 512}});
}

TEST_F(PeerModels, TransformersGpt2Fp16OpDtypesEqualTorchProfilers) {
  compare_with_torch_profiler("gpt2",
                              {"aten::addmm", "aten::embedding", "aten::layer_norm", "aten::linear",
                               "aten::scaled_dot_product_attention", "aten::cross_entropy_loss", "aten::tanh",
                               "aten::mm"},
                              {{"aten::addmm", "transformer.h.0.attn.c_attn", OpCategory::kDemoted},
                               {"aten::linear", "lm_head", OpCategory::kDemoted}},
                              // Conv1D weights are [in, out]: c_attn 64 x 192, c_fc 64 x 256.
                              {{"transformer.h.0.attn.c_attn", 64 * 192},
                               {"transformer.h.0.attn.c_proj", 64 * 64},
                               {"transformer.h.1.mlp.c_fc", 64 * 256},
                               {"transformer.h.1.mlp.c_proj", 256 * 64},
                               {"lm_head", 256 * 64}});
}

// Llama's rotary embedding computes its angles "Force float32": under autocast(enabled=False)
// on float32 inputs. Autocast decided its projections (bf16), the model's code the angles.
TEST_F(PeerModels, TransformersLlamaBf16RotaryAnglesAreWhereItsCodeTurnedAutocastOff) {
  compare_with_torch_profiler("llama",
                              {"aten::linear", "aten::embedding", "aten::matmul", "aten::cos", "aten::mm",
                               "aten::cross_entropy_loss"},
                              {{"aten::linear", "model.layers.0.self_attn.q_proj", OpCategory::kDemoted},
                               {"aten::linear", "model.layers.1.mlp.down_proj", OpCategory::kDemoted},
                               {"aten::linear", "lm_head", OpCategory::kDemoted},
                               {"aten::matmul", "model.rotary_emb", OpCategory::kAutocastOff},
                               // On the CPU's promote list: ATen promotes as autocast would have.
                               {"aten::cat", "model.rotary_emb", OpCategory::kUnchanged}},
                              // 4 heads of 16 for queries, 2 for keys and values.
                              {{"model.layers.0.self_attn.q_proj", 64 * 64},
                               {"model.layers.0.self_attn.k_proj", 32 * 64},
                               {"model.layers.1.mlp.down_proj", 64 * 128},
                               {"lm_head", 256 * 64}});
}

// The CPU's aten::lstm is on autocast's bf16 list; its oneDNN layers' backward hands back
// float32 gradients for the bfloat16 inputs autocast gave them, and autograd's engine casts
// them to bfloat16 (under "evaluate_function: MkldnnRnnLayerBackward0", beside the node): a
// cost of autocast's choice, as the casts back to the float32 weights are. The script casts nothing.
// (aten::lstm's states and weights are tensor lists, which the peer records as "TensorList":
// its layers' dtypes are compared.)
TEST_F(PeerModels, TorchLstmBf16EnginesGradientCastsAreAutocastsCost) {
  compare_with_torch_profiler("lstm",
                              {"aten::mkldnn_rnn_layer", "aten::mkldnn_rnn_layer_backward",
                               "aten::embedding", "aten::linear", "aten::cross_entropy_loss"},
                              {{"aten::lstm", "rnn", OpCategory::kDemoted},
                               {"aten::linear", "decoder", OpCategory::kDemoted},
                               {"aten::to", "rnn", OpCategory::kAutocastCast}},
                              {{"decoder", 256 * 64}});
}

// transformers' Trainer as users run it (TrainingArguments(bf16=True) on the CPU, its fused
// AdamW, linear schedule and clipping, accelerate's autocast): one ampscope step per Trainer
// step, with the loss, learning rate and gradient norm the Trainer logs itself.
TEST(HfTrainer, StepsCarryTheLossLearningRateAndGradientNormTheTrainerLogs) {
  if (!ampscope::test::python_can_import("transformers, accelerate"))
    GTEST_SKIP() << "transformers and accelerate are not installed (PYTHON_TEST_PACKAGES)";
  ScratchDir dir;
  const auto session = dir / "s.ampscope";
  const auto log = dir / "log.json";
  const auto r = ampscope::test::ampscope(
      fmt::format("run --out '{}' '{}' '{}' '{}'", session.string(),
                  ampscope::test::test_source_path("python/peer_trainer.py").string(), (dir / "out").string(),
                  log.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(log);
  const auto history = nlohmann::json::parse(in);
  const auto reader = SessionReader::open(session.string());
  const auto steps = reader.steps();
  ASSERT_EQ(steps.size(), 8u) << "max_steps=8";
  int logs = 0;
  for (const auto& entry : history) {
    if (!entry.contains("grad_norm")) {
      // The last entry: the mean loss of the whole run.
      double sum = 0;
      for (const auto& s : steps) sum += s.loss;
      EXPECT_NEAR(sum / 8, entry["train_loss"].get<double>(), 1e-6);
      continue;
    }
    ++logs;
    const int64_t at = entry["step"];
    ASSERT_GE(at, 2);
    const auto& last = steps[at - 1];
    ASSERT_EQ(last.step, at);
    // The Trainer logs the mean loss since its last log (every 2 steps), to 4 decimals;
    // the norm clip_grad_norm_ returned and the learning rate of the last of them.
    EXPECT_NEAR((steps[at - 2].loss + last.loss) / 2, entry["loss"].get<double>(), 5e-5 + 1e-9) << "step " << at;
    EXPECT_DOUBLE_EQ(last.grad_norm, entry["grad_norm"].get<double>()) << "step " << at;
    EXPECT_DOUBLE_EQ(last.lr, entry["learning_rate"].get<double>()) << "step " << at;
  }
  EXPECT_EQ(logs, 4);
  for (const auto& s : steps)
    EXPECT_NEAR(s.samples_per_second, 4 * 1000.0 / s.step_time_ms, 1e-6 * s.samples_per_second) << "step " << s.step;
  std::set<OpCategory> lm_head;
  for (const auto& row : reader.op_stats())
    if (row.top_level && row.name == "aten::linear" && row.module == "lm_head") lm_head.insert(row.category);
  EXPECT_EQ(lm_head, std::set<OpCategory>{OpCategory::kDemoted}) << "accelerate's bf16 autocast";
}

}  // namespace
