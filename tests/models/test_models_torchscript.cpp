// User models saved as TorchScript: loading, the names Python gives their parameters,
// forward, gradients, and the errors for missing, corrupt and unsuitable files.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/errors.h"
#include "engine/models/model.h"
#include "tests/models/model_errors.h"
#include "tests/support/test_support.h"

namespace ampscope::engine {
namespace {

using test::ScratchDir;

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)


std::unique_ptr<Model> load(const std::string& path) {
  ModelConfig config;
  config.kind = ModelKind::kTorchScript;
  config.torchscript_path = path;
  return make_model(config, SampleSpec{TaskKind::kClassification, {6}, 3, 0});
}

// Scripts and saves two modules: net.pt (Linear layers, one frozen parameter) and tuple.pt
// (forward returns a tuple). Prints "P <name> <numel>" for each trainable parameter and
// "Y <value>" for each output of net.pt on arange(12)/10 viewed [2, 6].
constexpr const char* kScript = R"(
import sys, torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 5)
        self.blocks = torch.nn.Sequential(torch.nn.Linear(5, 5), torch.nn.ReLU())
        self.out = torch.nn.Linear(5, 3)
        self.frozen = torch.nn.Parameter(torch.ones(2), requires_grad=False)
    def forward(self, x):
        return self.out(self.blocks(torch.tanh(self.fc1(x))))
class Pair(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 3)
    def forward(self, x):
        y = self.fc(x)
        return y, y
torch.manual_seed(0)
net = Net()
torch.jit.script(net).save(sys.argv[1] + '/net.pt')
torch.jit.script(Pair()).save(sys.argv[1] + '/tuple.pt')
for name, p in net.named_parameters():
    if p.requires_grad:
        print('P', name, p.numel())
with torch.no_grad():
    for v in net(torch.arange(12.).view(2, 6) / 10).flatten().tolist():
        print('Y', repr(v))
)";

struct PythonReference {
  std::vector<std::pair<std::string, int64_t>> params;
  std::vector<double> outputs;
};

class TorchScriptFromPython : public ::testing::Test {
 protected:
  void SetUp() override {
    auto python = ampscope::test::python_with_torch();
    if (!python) GTEST_SKIP() << "no Python with torch configured (AMPSCOPE_PYTHON)";
    ampscope::test::write_file(dir_ / "make_models.py", kScript);
    std::string out;
    const int rc = ampscope::test::run_command(
        fmt::format("'{}' '{}' '{}'", *python, (dir_ / "make_models.py").string(), dir_.path().string()), &out);
    ASSERT_EQ(rc, 0) << out;
    std::istringstream lines(out);
    std::string tag;
    while (lines >> tag) {
      if (tag == "P") {
        std::string name;
        int64_t numel = 0;
        lines >> name >> numel;
        ref_.params.emplace_back(name, numel);
      } else if (tag == "Y") {
        double v = 0;
        lines >> v;
        ref_.outputs.push_back(v);
      }
    }
    ASSERT_FALSE(ref_.params.empty()) << out;
  }

  ScratchDir dir_;
  PythonReference ref_;
};

TEST_F(TorchScriptFromPython, ParameterNamesAndCountMatchPython) {
  auto model = load(dir_ / "net.pt");
  std::vector<std::pair<std::string, int64_t>> got;
  int64_t total = 0;
  for (const auto& [name, p] : model->named_parameters()) {
    got.emplace_back(name, p.numel());
    EXPECT_TRUE(p.requires_grad()) << name;
  }
  for (const auto& [name, n] : ref_.params) total += n;
  EXPECT_EQ(got, ref_.params);  // the frozen parameter is left out, as Python filters it
  EXPECT_EQ(model->parameter_count(), total);
  EXPECT_CONTAINS(model->description(), "net.pt");
  EXPECT_CONTAINS(model->description(), "deprecated");
}

TEST_F(TorchScriptFromPython, ForwardMatchesPython) {
  auto model = load(dir_ / "net.pt");
  model->set_training(false);
  c10::NoGradGuard no_grad;
  at::Tensor y = model->forward(at::arange(12, at::kFloat).view({2, 6}) / 10);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2, 3}));
  at::Tensor expected = at::tensor(ref_.outputs, at::kDouble).to(at::kFloat).view({2, 3});
  EXPECT_TRUE(at::allclose(y, expected, 1e-5, 1e-6)) << y << expected;
}

TEST_F(TorchScriptFromPython, OneSgdStepChangesEveryParameter) {
  auto model = load(dir_ / "net.pt");
  model->set_training(true);
  at::Tensor x = at::randn({4, 6});
  at::Tensor before = model->forward(x).detach();
  model->forward(x).square().sum().backward();
  std::vector<at::Tensor> old;
  {
    c10::NoGradGuard no_grad;
    for (const auto& [name, p] : model->named_parameters()) {
      ASSERT_TRUE(p.grad().defined()) << name;
      EXPECT_TRUE(at::isfinite(p.grad()).all().item<bool>()) << name;
      old.push_back(p.clone());
      p.sub_(p.grad() * 0.1);
    }
  }
  auto params = model->parameters();
  for (size_t i = 0; i < params.size(); ++i) EXPECT_FALSE(at::equal(params[i], old[i])) << i;
  EXPECT_FALSE(at::allclose(model->forward(x).detach(), before));
}

TEST_F(TorchScriptFromPython, NonTensorOutputIsAModelError) {
  auto model = load(dir_ / "tuple.pt");
  EXPECT_CONTAINS(model_error([&] { model->forward(at::randn({2, 6})); }), "single Tensor");
}

TEST_F(TorchScriptFromPython, ForwardFailureIsAModelError) {
  auto model = load(dir_ / "net.pt");
  // Seven features where the first Linear takes six: the c10::Error must not escape.
  const std::string msg = model_error([&] { model->forward(at::randn({2, 7})); });
  EXPECT_CONTAINS(msg,
                  "failed in forward: RuntimeError: mat1 and mat2 shapes cannot be multiplied");
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
}

TEST(TorchScript, MissingFileIsAModelError) {
  ScratchDir dir;
  const std::string path = dir / "absent.pt";
  const std::string msg = model_error([&] { load(path); });
  EXPECT_CONTAINS(msg, path);
  EXPECT_CONTAINS(msg, "no such file");
}

TEST(TorchScript, GarbageFileIsAModelError) {
  ScratchDir dir;
  const std::string path = dir / "garbage.pt";
  ampscope::test::write_file(path, "this is not a zip archive\n");
  const std::string msg = model_error([&] { load(path); });
  EXPECT_CONTAINS(msg, fmt::format("'{}' is not a TorchScript file: ", path));
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
}

TEST(TorchScript, EmptyPathIsAModelError) {
  EXPECT_CONTAINS(model_error([] { load(""); }), "needs a file");
}

}  // namespace
}  // namespace ampscope::engine
