// Precision readiness of a user's own PyTorch script (issue #30), as a user meets
// it: `ampscope run` on a model whose first layer puts out one channel a hundred
// times the others; `ampscope summary` says the layer fed by that channel is not
// ready for NVFP4 and the well-scaled first layer is ready for every format, and
// the JSON summary says the same.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "profiler/store/session_reader.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::test::ScratchDir;
using ampscope::test::write_file;

constexpr const char* kOutlierScript = R"(import torch
from torch import nn
torch.manual_seed(0)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(64, 64)
        self.second = nn.Linear(64, 64)
        self.head = nn.Linear(64, 4)
        with torch.no_grad():
            self.first.bias[40] = 100.0  # channel 40 of second's input: an outlier on every token

    def forward(self, x):
        return self.head(torch.relu(self.second(torch.relu(self.first(x)))))

model = Net()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    loss = nn.functional.cross_entropy(model(torch.randn(32, 64)), torch.randint(0, 4, (32,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
)";

// The summary's readiness row of `layer`: its cells (split at two or more spaces).
std::vector<std::string> readiness_row(const std::string& summary, const std::string& layer) {
  const size_t table = summary.find("Precision readiness per layer");
  if (table == std::string::npos) return {};
  std::istringstream lines(summary.substr(table));
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    const std::regex separator("\\s{2,}");
    for (std::sregex_token_iterator it(line.begin(), line.end(), separator, -1), end; it != end; ++it)
      if (!it->str().empty()) cells.push_back(*it);
    if (!cells.empty() && cells[0] == layer) return cells;
  }
  return {};
}

TEST(PythonReadiness, AnOutlierChannelIsNotReadyForNvfp4AndAWellScaledLayerIs) {
  if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  ScratchDir dir;
  write_file(dir / "train.py", kOutlierScript);
  const auto session = (dir / "s.ampscope").string();
  const auto run = ampscope::test::ampscope(
      fmt::format("run --out '{}' --grad-every 2 --sample-budget 0 --readiness-every 1 '{}'", session,
                  (dir / "train.py").string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;

  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("Precision readiness per layer (2 sampled steps"), std::string::npos) << summary.output;
  const std::vector<std::string> header = readiness_row(summary.output, "layer");
  EXPECT_EQ(header, (std::vector<std::string>{"layer", "FP8", "MXFP8", "NVFP4"})) << summary.output;
  const std::vector<std::string> first = readiness_row(summary.output, "first");
  const std::vector<std::string> second = readiness_row(summary.output, "second");
  ASSERT_EQ(first.size(), 4u) << summary.output;
  ASSERT_EQ(second.size(), 4u) << summary.output;
  for (size_t c = 1; c < 4; ++c) EXPECT_EQ(first[c].rfind("ready ", 0), 0u) << header[c] << ": " << first[c];
  EXPECT_EQ(second[1].rfind("ready ", 0), 0u) << second[1];
  EXPECT_EQ(second[2].rfind("ready ", 0), 0u) << second[2];
  // NVFP4: the outlier's 16-blocks flush their other values.
  EXPECT_TRUE(std::regex_search(second[3], std::regex("^(keep|borderline) [0-9]+% flushed \\((input|weight gradient)\\)$")))
      << second[3];
  EXPECT_NE(summary.output.find("measured: weights, layer inputs and weight gradients"), std::string::npos);
  EXPECT_NE(summary.output.find("e2m1 (NVFP4): ready at >= 17 dB SQNR"), std::string::npos);

  const auto json_path = (dir / "s.json").string();
  const auto exported = ampscope::test::ampscope(fmt::format("export '{}' --format json -o '{}'", session, json_path));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  std::ifstream in(json_path);
  const nlohmann::json readiness = nlohmann::json::parse(in)["readiness"];
  ASSERT_TRUE(readiness.is_object());
  EXPECT_EQ(readiness["sampled_steps"], 2);
  std::map<std::string, nlohmann::json> layers;
  for (const auto& l : readiness["layers"]) layers[l["layer"].get<std::string>()] = l;
  ASSERT_TRUE(layers.contains("first") && layers.contains("second") && layers.contains("head"));
  EXPECT_EQ(layers["first"]["best_target"], "NVFP4");
  EXPECT_NE(layers["second"]["targets"]["NVFP4"]["verdict"], "ready");
  EXPECT_EQ(layers["second"]["targets"]["NVFP4"]["metric"], "flushed_share");
  EXPECT_GT(layers["second"]["formats"]["nvfp4"]["tensors"]["input"]["flushed_share"].get<double>(), 0.10);
  EXPECT_EQ(layers["second"]["best_target"], "MXFP8");
}

// Layers whose weight a parametrization computes (spectral_norm in a GAN's discriminator,
// weight_norm): readiness measures the weight the forward computed. Reading .weight itself
// ran spectral_norm's power iteration a second time per sample, moving its u and v, and so
// the user's losses. Built before the model, the parametrizations were also models of their
// own (their modules named "0" and "ParametrizationList.0").
TEST(PythonReadiness, AParametrizedWeightIsMeasuredAsTheForwardComputesItAndTheTrainingStaysTheScripts) {
  const auto python = ampscope::test::python_with_torch();
  if (!python) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  ScratchDir dir;
  write_file(dir / "train.py", R"(import sys, torch
from torch import nn
from torch.nn.utils.parametrizations import spectral_norm, weight_norm
torch.manual_seed(0)

class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.sn = spectral_norm(nn.Linear(16, 32))
        self.wn = weight_norm(nn.Linear(32, 32))
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        return self.head(nn.functional.leaky_relu(self.wn(nn.functional.leaky_relu(self.sn(x), 0.2)), 0.2))

model = Critic()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
with open(sys.argv[1], "w") as out:
    for step in range(4):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(torch.randn(8, 16)).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        out.write(f"{loss.item().hex()} {model.sn.parametrizations.weight[0]._u.sum().item().hex()}\n")
)");
  const auto script = (dir / "train.py").string();
  const auto bare_path = (dir / "bare.txt").string();
  ASSERT_EQ(ampscope::test::run_command(fmt::format("'{}' '{}' '{}'", *python, script, bare_path)), 0);
  const auto session = (dir / "s.ampscope").string();
  const auto run = ampscope::test::ampscope(fmt::format(
      "run --out '{}' --grad-every 1 --sample-budget 0 --readiness-every 1 '{}' '{}'", session, script,
      (dir / "captured.txt").string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string bare = ampscope::test::read_file(dir / "bare.txt");
  EXPECT_EQ(std::count(bare.begin(), bare.end(), '\n'), 4) << bare;
  EXPECT_EQ(ampscope::test::read_file(dir / "captured.txt"), bare);  // every loss and u, to the bit

  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_EQ(readiness_row(summary.output, "sn").size(), 4u) << summary.output;
  EXPECT_EQ(readiness_row(summary.output, "wn").size(), 4u) << summary.output;
  EXPECT_NE(summary.output.find("train.py: Critic ("), std::string::npos) << summary.output;
  EXPECT_EQ(summary.output.find("ParametrizationList"), std::string::npos) << summary.output;
  std::set<std::string> modules;
  for (const auto& op : ampscope::profiler::SessionReader::open(session).op_stats()) modules.insert(op.module);
  EXPECT_TRUE(modules.contains("sn.parametrizations.weight.0")) << fmt::format("{}", fmt::join(modules, ", "));
  EXPECT_TRUE(modules.contains("wn.parametrizations.weight.0")) << fmt::format("{}", fmt::join(modules, ", "));
  EXPECT_FALSE(modules.contains("0")) << fmt::format("{}", fmt::join(modules, ", "));
}

// nn.MultiheadAttention multiplies by its in_proj_weight and out_proj.weight inside
// multi_head_attention_forward, calling no Linear: readiness missed both, a transformer's
// attention GEMMs. Measured now as "<path>.in_proj" and "<path>.out_proj", they read as the
// same attention written with two Linear layers (its peer: same weights, same input) reads,
// tensor by tensor and format by format; a cross-attention's in-projection has both its
// inputs (query, and the memory); separate q/k/v weights (kdim, vdim) are layers of their own;
// the training stays the script's to the bit.
TEST(PythonReadiness, MultiheadAttentionsProjectionsAreMeasuredAsTheSameAttentionBuiltFromLinearLayers) {
  const auto python = ampscope::test::python_with_torch();
  if (!python) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  ScratchDir dir;
  write_file(dir / "train.py", R"(import sys, torch
from torch import nn
from torch.nn import functional as F
torch.manual_seed(0)

class LinearAttention(nn.Module):
    """The attention nn.MultiheadAttention computes, written with two Linear layers."""
    def __init__(self, mha):
        super().__init__()
        self.heads, e = mha.num_heads, mha.embed_dim
        self.qkv, self.out = nn.Linear(e, 3 * e), nn.Linear(e, e)
        with torch.no_grad():
            self.qkv.weight.copy_(mha.in_proj_weight)
            self.qkv.bias.copy_(mha.in_proj_bias)
            self.out.weight.copy_(mha.out_proj.weight)
            self.out.bias.copy_(mha.out_proj.bias)

    def forward(self, x):
        b, n, e = x.shape
        split = lambda t: t.view(b, n, self.heads, e // self.heads).transpose(1, 2)
        q, k, v = self.qkv(x).split(e, dim=-1)
        a = F.scaled_dot_product_attention(split(q), split(k), split(v))
        return self.out(a.transpose(1, 2).reshape(b, n, e))

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(32, 4, batch_first=True)
        self.peer = LinearAttention(self.mha)
        self.cross = nn.MultiheadAttention(32, 4, batch_first=True)
        self.kv = nn.MultiheadAttention(32, 4, batch_first=True, kdim=8, vdim=8)

    def forward(self, x, memory, small):
        a = self.mha(x, x, x, need_weights=False)[0]
        return (a.pow(2).mean() + self.peer(x).pow(2).mean() + self.cross(x, memory, memory)[0].pow(2).mean()
                + self.kv(x, small, small)[0].pow(2).mean())

model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
with open(sys.argv[1], "w") as out:
    for step in range(2):
        loss = model(torch.randn(8, 16, 32), torch.randn(8, 10, 32), torch.randn(8, 10, 8))
        loss.backward()
        opt.step()
        opt.zero_grad()
        out.write(f"{loss.item().hex()}\n")
)");
  const auto script = (dir / "train.py").string();
  const auto bare = (dir / "bare.txt").string();
  ASSERT_EQ(ampscope::test::run_command(fmt::format("'{}' '{}' '{}'", *python, script, bare)), 0);
  const auto session = (dir / "s.ampscope").string();
  const auto run = ampscope::test::ampscope(fmt::format(
      "run --out '{}' --grad-every 1 --sample-budget 0 --readiness-every 1 '{}' '{}'", session, script,
      (dir / "captured.txt").string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(ampscope::test::read_file(dir / "captured.txt"), ampscope::test::read_file(dir / "bare.txt"));

  const auto json_path = (dir / "s.json").string();
  const auto exported = ampscope::test::ampscope(fmt::format("export '{}' --format json -o '{}'", session, json_path));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  std::ifstream in(json_path);
  const nlohmann::json summary = nlohmann::json::parse(in);  // named: a range-for over a temporary's member dangles
  std::map<std::string, nlohmann::json> layers;
  for (const auto& l : summary["readiness"]["layers"]) layers[l["layer"].get<std::string>()] = l;
  std::vector<std::string> names;
  for (const auto& [name, layer] : layers) names.push_back(name);
  const std::string listed = fmt::format("{}", fmt::join(names, ", "));
  for (const char* layer : {"mha.in_proj", "mha.out_proj", "peer.qkv", "peer.out", "cross.in_proj", "cross.out_proj",
                            "kv.q_proj", "kv.k_proj", "kv.v_proj", "kv.out_proj"})
    ASSERT_TRUE(layers.contains(layer)) << layer << " not in " << listed;
  for (const auto& [mha, peer] : {std::pair{"mha.in_proj", "peer.qkv"}, std::pair{"mha.out_proj", "peer.out"}}) {
    const nlohmann::json& ours = layers[mha]["formats"];
    ASSERT_EQ(ours.size(), layers[peer]["formats"].size());
    for (const auto& [format, tensors] : ours.items()) {
      for (const char* role : {"weight", "input", "weight_grad"}) {
        const nlohmann::json& a = tensors["tensors"][role];
        const nlohmann::json& b = layers[peer]["formats"][format]["tensors"][role];
        ASSERT_TRUE(a.is_object() && b.is_object()) << mha << " " << format << " " << role;
        EXPECT_EQ(a["elements"], b["elements"]) << mha << " " << format << " " << role;
        // The attention's arithmetic differs in rounding only (its out_proj's input, the gradients).
        EXPECT_NEAR(a["sqnr_db"].get<double>(), b["sqnr_db"].get<double>(), 0.05)
            << mha << " " << format << " " << role;
        EXPECT_NEAR(a["flushed_share"].get<double>(), b["flushed_share"].get<double>(), 1e-3) << mha << " " << format;
      }
      EXPECT_EQ(tensors["verdict"], layers[peer]["formats"][format]["verdict"]) << mha << " " << format;
    }
  }
  // A cross-attention's in-projection multiplies the query (8 x 16 tokens) by the q rows and
  // the memory (8 x 10, key and value alike) by the k and v rows in one GEMM, over 2 steps.
  const auto inputs = [&](const std::string& layer) {
    return layers[layer]["formats"]["mxfp8"]["tensors"]["input"]["elements"].get<int64_t>();
  };
  EXPECT_EQ(inputs("mha.in_proj"), 2 * 8 * 16 * 32);
  EXPECT_EQ(inputs("cross.in_proj"), 2 * (8 * 16 + 8 * 10) * 32);
  EXPECT_EQ(inputs("kv.k_proj"), 2 * 8 * 10 * 8);
}

// Compiled code shows no layer input: readiness then measures the weights the capture noted as
// it mapped the model, under the layer names the eager run gives them. Taking every 2-D
// "*.weight" instead listed the position embedding as a layer, the tied head as the token
// embedding "wte", and missed MultiheadAttention's in-projection.
TEST(PythonReadiness, ACompiledModelsLayersAreTheEagerRunsByName) {
  if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  ScratchDir dir;
  write_file(dir / "train.py", R"(import sys, torch
from torch import nn
torch.manual_seed(0)
class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(50, 32), nn.Embedding(16, 32)
        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)
        self.fc = nn.Linear(32, 32)
        self.lm_head = nn.Linear(32, 50, bias=False)
        self.lm_head.weight = self.wte.weight
    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        x = x + self.attn(x, x, x, need_weights=False)[0]
        return self.lm_head(torch.relu(self.fc(x)))
model = LM()
if sys.argv[1:] == ["compiled"]:
    model = torch.compile(model, backend="aot_eager")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    ids = torch.randint(0, 50, (4, 16))
    loss = nn.functional.cross_entropy(model(ids).reshape(-1, 50), ids.reshape(-1))
    loss.backward(); opt.step(); opt.zero_grad()
)");
  std::map<std::string, std::set<std::string>> layers;
  for (const std::string mode : {"eager", "compiled"}) {
    const auto session = (dir / (mode + ".ampscope")).string();
    const auto run = ampscope::test::ampscope(
        fmt::format("run --out '{}' --grad-every 1 --sample-budget 0 --readiness-every 1 '{}' {}", session,
                    (dir / "train.py").string(), mode));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    for (const auto& layer : ampscope::profiler::SessionReader::open(session).readiness().layers())
      layers[mode].insert(layer.layer);
  }
  EXPECT_EQ(layers["eager"], (std::set<std::string>{"attn.in_proj", "attn.out_proj", "fc", "lm_head"}));
  EXPECT_EQ(layers["compiled"], layers["eager"]);
}

}  // namespace
