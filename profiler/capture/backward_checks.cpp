#include "profiler/capture/backward_checks.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <map>
#include <string_view>
#include <utility>

#include "profiler/capture/dtype_names.h"
#include "profiler/capture/own_work.h"

namespace ampscope::profiler {
namespace {

// A sum accumulated in fp32: inf/NaN exactly when an element is (only a sum of finite
// values beyond fp32's ~3.4e38 could overflow it, never fp16's). One reduction, a quarter
// of isfinite().all() on small tensors (python/ampscope/_backward_origin.py: the same).
at::Tensor finite_probe(const at::Tensor& grad) {
  const auto t = grad.scalar_type();
  if (t == at::kHalf || t == at::kBFloat16 || t == at::kFloat) return grad.sum(at::kFloat);
  return grad.sum().abs().to(at::kFloat);
}

}  // namespace

struct BackwardCheckRecorder::Uses {
  std::vector<GradientUse> list;  // filled during the forward, read after the backward
};

struct BackwardCheckRecorder::Results {
  std::mutex mutex;
  struct Test {
    std::shared_ptr<Uses> uses;
    at::Tensor probe;  // on the gradient's device
    c10::ScalarType dtype;
  };
  std::vector<Test> tests;
  cupti::ActivitySource* source = nullptr;  // null once the recorder is gone
};

BackwardCheckRecorder::BackwardCheckRecorder() : results_(std::make_shared<Results>()) {}

BackwardCheckRecorder::~BackwardCheckRecorder() {
  remove_parameter_hooks();
  // A graph that outlives the profiler keeps its hooks: they must not reach the tracer.
  std::lock_guard lock(results_->mutex);
  results_->source = nullptr;
}

void BackwardCheckRecorder::set_activity_source(cupti::ActivitySource* source) {
  source_ = source;
  std::lock_guard lock(results_->mutex);
  results_->source = source;
}

int32_t BackwardCheckRecorder::name_index(std::string_view name) {
  auto [named, added] = module_index_.try_emplace(std::string(name), static_cast<int32_t>(modules_.size()));
  if (added) modules_.emplace_back(name);
  return named->second;
}

// A parameter's hook, for one checked step. at::Tensor::register_hook on a leaf cannot be
// taken back: remove_hook leaves an empty slot that every later backward walks past, a
// slot per parameter per checked step. This one sits in the leaf's own hook list
// (what its AccumulateGrad node runs, as register_hook's do) and leaves it as it was.
class BackwardCheckRecorder::ParameterHook final : public torch::autograd::FunctionPreHook {
 public:
  ParameterHook(std::shared_ptr<Results> results, std::shared_ptr<Uses> uses)
      : results_(std::move(results)), uses_(std::move(uses)) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& grads) override {
    if (!grads.empty()) record_test(results_, uses_, grads.front());
    return grads;
  }

 private:
  std::shared_ptr<Results> results_;
  std::shared_ptr<Uses> uses_;
};

// The step's results are what a hook keeps: one that fires late (a graph kept past its
// step) adds to a step already read, never to the next.
void BackwardCheckRecorder::record_test(const std::shared_ptr<Results>& results, const std::shared_ptr<Uses>& uses,
                                        const at::Tensor& grad) {
  if (!grad.defined() || grad.is_sparse()) return;
  std::lock_guard lock(results->mutex);
  OwnWork own(results->source);  // not the user's op, nor the user's kernel
  at::NoGradGuard no_grad;
  results->tests.push_back({uses, finite_probe(grad), grad.scalar_type()});
}

void BackwardCheckRecorder::set_parameters(engine::NamedTensors parameters) { parameters_ = std::move(parameters); }

void BackwardCheckRecorder::watch_parameters() {
  if (!at::GradMode::is_enabled()) return;
  for (const auto& [name, parameter] : parameters_) {
    if (!parameter.defined() || !parameter.requires_grad() || !parameter.is_leaf()) continue;
    auto uses = std::make_shared<Uses>();
    uses->list.push_back({name_index(name), GradientSide::kParameter});
    auto hook = std::make_unique<ParameterHook>(results_, std::move(uses));
    parameter_hooks_.emplace_back(parameter, hook.get());
    torch::autograd::impl::add_hook(parameter, std::move(hook));
  }
}

void BackwardCheckRecorder::remove_parameter_hooks() {
  for (const auto& [parameter, hook] : parameter_hooks_) {
    auto& hooks = torch::autograd::impl::hooks(parameter);
    std::erase_if(hooks, [hook](const auto& h) { return h.get() == hook; });
  }
  parameter_hooks_.clear();
}

void BackwardCheckRecorder::discard() {
  remove_parameter_hooks();
  parameters_.clear();
  watched_.clear();
  std::lock_guard lock(results_->mutex);
  results_->tests.clear();
}

void BackwardCheckRecorder::on_module_tensor(const std::string& scope_name, const at::Tensor& tensor,
                                             GradientSide side) {
  if (!tensor.defined() || !tensor.requires_grad() || !at::GradMode::is_enabled()) return;
  std::string_view name(scope_name);
  if (const std::string_view prefix(engine::kModuleScopePrefix); name.starts_with(prefix))
    name.remove_prefix(prefix.size());
  const int32_t module = name_index(name);
  c10::TensorImpl* impl = tensor.unsafeGetTensorImpl();
  auto it = watched_.find(impl);
  if (it == watched_.end() || it->second.tensor.lock().get() != impl) {
    auto uses = std::make_shared<Uses>();
    const Watched watched{c10::weak_intrusive_ptr<c10::TensorImpl>(tensor.getIntrusivePtr()), uses};
    it = watched_.insert_or_assign(impl, watched).first;
    tensor.register_hook([results = results_, uses](const at::Tensor& grad) { record_test(results, uses, grad); });
  }
  it->second.uses->list.push_back({module, side});
}

std::optional<BackwardCheck> BackwardCheckRecorder::take(int64_t step, bool skipped) {
  remove_parameter_hooks();
  std::shared_ptr<Results> done = std::exchange(results_, std::make_shared<Results>());
  results_->source = source_;
  watched_.clear();
  std::vector<Results::Test> tests;
  {
    std::lock_guard lock(done->mutex);
    tests = std::move(done->tests);
  }
  if (tests.empty()) return std::nullopt;
  std::vector<CheckedGradient> gradients(tests.size());
  {
    OwnWork own(source_);  // the one transfer per device
    std::map<std::string, std::vector<size_t>> by_device;
    for (size_t i = 0; i < tests.size(); ++i) by_device[tests[i].probe.device().str()].push_back(i);
    for (const auto& [device, positions] : by_device) {
      std::vector<at::Tensor> flags;
      flags.reserve(positions.size());
      for (size_t i : positions) flags.push_back(tests[i].probe);
      const at::Tensor host = at::isfinite(at::stack(flags)).cpu();
      const bool* finite = host.data_ptr<bool>();
      for (size_t k = 0; k < positions.size(); ++k) gradients[positions[k]].finite = finite[k];
    }
  }
  for (size_t i = 0; i < tests.size(); ++i) {
    gradients[i].uses = tests[i].uses->list;
    gradients[i].dtype = dtype_name(tests[i].dtype);
  }
  return locate_backward_inf(step, skipped, modules_, gradients);
}

}  // namespace ampscope::profiler
