// _ampscope_capture: the profiler's capture core (OpObserver, the op classifier,
// OpAggregator, SessionWriter, CUPTI, gradient range statistics) for a training
// loop written in Python. The Python package (python/ampscope) finds the step
// boundaries, the GradScaler's decisions and the module paths through PyTorch's
// global hooks and feeds them here; this file only turns them into the
// TrainingObserver calls the built-in engine makes, so the Profiler and the
// session are the same.
//
// Built against the LibTorch of the torch it is imported with (the wrapper checks
// the version before loading it), with NDEBUG like LibTorch itself: RecordFunction's
// layout depends on it.
#include <ATen/record_function.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/device.h"
#include "engine/module_scope.h"
#include "profiler/analysis/backward_origin.h"
#include "profiler/capture/op_observer.h"
#include "profiler/capture/own_cuda_kernels.h"
#include "profiler/capture/profiler.h"
#include "profiler/capture/session_meta.h"
#include "profiler/analysis/op_classifier.h"
#include "profiler/analysis/warmup_step.h"

namespace py = pybind11;

namespace ampscope::python {
namespace {

// Scope names ("ampscope.module:blocks.3.attn", "ampscope.phase:forward") by id.
// RecordFunction keeps a string_view of its name, so they live as long as the process.
class ScopeNames {
 public:
  static ScopeNames& instance() {
    static ScopeNames names;
    return names;
  }
  size_t intern(const std::string& name) {
    std::lock_guard lock(mutex_);
    auto [it, added] = ids_.try_emplace(name, names_.size());
    if (added) names_.push_back(name);
    return it->second;
  }
  std::string_view get(size_t id) {
    std::lock_guard lock(mutex_);
    return id < names_.size() ? std::string_view(names_[id]) : std::string_view();
  }

 private:
  std::mutex mutex_;
  std::deque<std::string> names_;  // a deque: references stay valid as it grows
  std::unordered_map<std::string, size_t> ids_;
};

// The open scopes of this thread, innermost last. A RecordFunction ends when destroyed.
thread_local std::vector<std::unique_ptr<at::RecordFunction>> t_scopes;

void enter_scope(size_t id) {
  auto scope = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
  if (scope->isActive()) scope->before(ScopeNames::instance().get(id));
  t_scopes.push_back(std::move(scope));
}

// An op of ampscope's own around a compiled graph's call (FUNCTION scope, so the
// observer records it like any op): its children are the graph's kernels
// (profiler/analysis/compiled_kernels.h). Closed by exit_scope/unwind_scopes.
void enter_op_scope(size_t id) {
  auto scope = std::make_unique<at::RecordFunction>(at::RecordScope::FUNCTION);
  if (scope->isActive()) scope->before(ScopeNames::instance().get(id));
  t_scopes.push_back(std::move(scope));
}

void exit_scope() {
  if (!t_scopes.empty()) t_scopes.pop_back();
}

// Ends scopes left open by code that raised between enter and exit.
void unwind_scopes(size_t depth) {
  while (t_scopes.size() > depth) t_scopes.pop_back();
}

// RecordFunction on or off for this thread; returns the previous state. The
// wrapper's own tensor reads (.item() of a loss or a found_inf) run with it off,
// so they never appear among the script's ops.
bool set_recording_enabled(bool enabled) {
  const bool previous = at::isRecordFunctionEnabled();
  at::enableRecordFunction(enabled);
  return previous;
}

double get_double(const py::dict& d, const char* key, double fallback) {
  if (!d.contains(key) || d[key].is_none()) return fallback;
  return d[key].cast<double>();
}

// A value that may come as a tensor (`tensor` takes it: read later, on the device's
// time) or as a number (returned; NaN while a tensor is pending).
double tensor_or_double(const py::dict& d, const char* key, double fallback, at::Tensor& tensor) {
  if (d.contains(key) && THPVariable_Check(d[key].ptr())) {
    tensor = d[key].cast<at::Tensor>();
    return std::numeric_limits<double>::quiet_NaN();
  }
  return get_double(d, key, fallback);
}

// Windows up to this many steps keep per-step op times (ProfilerOptions::op_step_samples).
constexpr int64_t kStepSamplesUpTo = 32;

class Capture {
 public:
  explicit Capture(const py::dict& o) {
    profiler::ProfilerOptions options;
    options.session_path = o["path"].cast<std::string>();
    options.overwrite = o["overwrite"].cast<bool>();
    for (const auto& field : options.capture.fields()) *field.value = o[field.option->key].cast<int64_t>();
    options.capture.trace_gpu = o["trace_gpu"].cast<bool>();
    // A short window keeps each op's time per step: the profiled runs of `ampscope run
    // --compare` take per-step medians of them, as the engine's comparison does (a step
    // the machine stalled in would otherwise weigh a third of a 3-step mean).
    if (options.capture.window_steps > 0 && options.capture.window_steps <= kStepSamplesUpTo)
      options.op_step_samples = static_cast<size_t>(options.capture.window_steps);
    description_ = o["description"].cast<std::string>();
    options.describe_session = [this](profiler::SessionMeta& meta) {
      // Not an engine run: no TrainConfig, and the precision is whatever the script's
      // autocast regions ask for (set when they are entered).
      meta.config_json.clear();
      meta.model = description_;
      meta.data.clear();
      meta.precision.clear();
      meta.parameter_count = 0;
      meta.scaler_enabled = false;
    };
    profiler_ = std::make_unique<profiler::Profiler>(std::move(options));
  }

  // last_step: the script's max_steps (0: it runs to its end, unknown here).
  void start(const std::string& device, int64_t last_step) {
    if (started_) throw std::runtime_error("this capture was already started");
    started_ = true;
    device_ = device;
    engine::RunStartedEvent run;
    run.config.steps = last_step;
    run.device = device;
    run.model = description_;
    profiler_->on_run_start(run);
    step_ = 1;  // begun by begin_first_step()
  }

  // Step 1 begins at the script's first model call or autocast region (the wrapper's
  // first_step_begins), or at its end if neither came. What ran before it is set-up, not
  // training: building and initialising the model (`normal_` over every weight), moving it
  // to the GPU, the data loader's start. Recorded, it was step 1's ops and kernels.
  void begin_first_step() {
    if (first_step_begun_) return;
    first_step_begun_ = true;
    profiler_->on_step_begin(step_);
  }

  int64_t step() const { return step_; }
  bool step_is_sampled(int64_t step) const { return profiler_->step_is_sampled(step); }
  bool wants_gradients() { return profiler_->wants_gradients(step_); }
  bool wants_readiness() const { return profiler_->wants_readiness(); }
  bool wants_activations() const { return profiler_->wants_activations(); }

  // (name, parameter) pairs whose .grad holds the unscaled gradient.
  void gradients(const std::vector<std::pair<std::string, at::Tensor>>& parameters, double loss_scale) {
    at::DisableRecordFunctionGuard outside_recording;  // the statistics' own ops are not the script's
    profiler_->on_unscaled_gradients(step_, parameters, loss_scale);
  }

  // A Linear or convolution module's input and weight, on a readiness step (the
  // wrapper asks wants_readiness() first): precision readiness.
  void layer_input(const std::string& layer, const at::Tensor& input, const at::Tensor& weight) {
    at::DisableRecordFunctionGuard outside_recording;  // the readiness ops are not the script's
    profiler_->on_layer_input(layer, input, weight);
  }

  // A module's output on a range-sampled step (the wrapper asks wants_activations() first):
  // its range against the float formats, measured at the step's end in one batched pass.
  void module_output(const std::string& module, const at::Tensor& output) {
    at::DisableRecordFunctionGuard outside_recording;  // holding a view of it is no op of the script's
    profiler_->on_module_output(module, output);
  }

  // transformers' Conv1D weight ([in, out]), found when the wrapper maps a model
  // (ReadinessRecorder::note_in_by_out).
  void weight_in_by_out(const at::Tensor& weight) { profiler_->note_weight_in_by_out(weight); }
  // A GEMM layer's weight and its layer's name, found likewise (ReadinessRecorder::note_gemm_weight).
  void gemm_weight(const std::string& layer, const at::Tensor& weight) { profiler_->note_gemm_weight(layer, weight); }

  // Ends the current step with what the wrapper saw, and begins the next one.
  // Values that live on the device come as tensors (the loss's parts, clip_grad_norm_'s
  // norm, GradScaler's scale, growth tracker and found-inf flags): they are read when the
  // device has computed them (Profiler::on_step_end), so the step's end does not wait.
  // `optimizers`: a row per optimizer that took part (OptimizerStepRecord's fields; its
  // found_inf a bool or GradScaler's per-device flag tensors).
  void end_step(const py::dict& d) {
    begin_first_step();
    engine::StepEvent e;
    e.step = step_;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    e.loss = get_double(d, "loss", nan);
    e.lr = get_double(d, "lr", nan);
    profiler::StepDeviceValues device_values;
    if (d.contains("loss_parts")) device_values.loss_parts = d["loss_parts"].cast<std::vector<at::Tensor>>();
    e.grad_norm = tensor_or_double(d, "grad_norm", nan, device_values.grad_norm);
    e.loss_scale = tensor_or_double(d, "loss_scale", 1.0, device_values.loss_scale);
    e.loss_scale_after = tensor_or_double(d, "loss_scale_after", nan, device_values.loss_scale_after);
    e.growth_tracker =
        static_cast<int64_t>(tensor_or_double(d, "growth_tracker", 0.0, device_values.growth_tracker));
    e.step_time_ms = get_double(d, "step_time_ms", nan);
    e.samples_per_second = get_double(d, "samples_per_second", nan);  // NaN: no batch seen
    std::vector<profiler::OptimizerStepRecord> rows;
    if (d.contains("optimizers")) {
      for (const auto& item : d["optimizers"].cast<py::list>()) {
        const py::dict o = item.cast<py::dict>();
        profiler::OptimizerStepRecord& r = rows.emplace_back();
        r.step = step_;
        r.optimizer = o["optimizer"].cast<int32_t>();
        r.name = o["name"].cast<std::string>();
        r.stepped = o["stepped"].cast<bool>();
        std::vector<at::Tensor>& flags = device_values.found_inf.emplace_back();
        if (py::isinstance<py::list>(o["found_inf"]))
          flags = o["found_inf"].cast<std::vector<at::Tensor>>();
        else
          r.found_inf = r.skipped = o["found_inf"].cast<bool>();
        r.unscale_calls = o["unscale_calls"].cast<int64_t>();
        r.lr = get_double(o, "lr", nan);
        r.loss_scale = e.loss_scale;
        r.loss_scale_after = e.loss_scale_after;
      }
    }
    {
      at::DisableRecordFunctionGuard outside_recording;
      e.memory = engine::sample_memory(c10::Device(memory_device_));
    }
    profiler_->on_step_end(e, device_values, std::move(rows));
    if (d.contains("wait") && d["wait"].cast<bool>()) {
      py::gil_scoped_release release;
      profiler_->wait_for_step_values();
    }
    ++step_;
    profiler_->on_step_begin(step_);
  }

  // GradScaler's state as update() is about to change it: a float64 [scale, tracker,
  // found-inf per optimizer row] copy on the scale's device (scaler_state_copy), for
  // end_step's values (made without a wait; the profiler's own work).
  at::Tensor copy_scaler_state(const at::Tensor& scale, const at::Tensor& growth_tracker,
                               const std::vector<std::vector<at::Tensor>>& found_inf) {
    at::DisableRecordFunctionGuard outside_recording;  // not the script's ops
    return profiler_->copy_scaler_state(scale, growth_tracker, found_inf);
  }

  // The newest step stored, with its values read (a step or a few behind the script's
  // on a GPU): {step, skipped, growth_tracker}, or None before the first
  // (python/ampscope/_scaler_state.py decides the next backward check from it).
  py::object newest_stored_step() const {
    const auto& newest = profiler_->newest_stored_step();
    if (!newest) return py::none();
    py::dict d;
    d["step"] = newest->step;
    d["skipped"] = newest->skipped;
    d["growth_tracker"] = newest->growth_tracker;
    return d;
  }

  // lr_scheduler.step() calls (python/ampscope/_schedulers.py): stored once the step each
  // followed has its values (whether GradScaler skipped it is read from the device).
  void scheduler_steps(const py::list& rows) {
    std::vector<profiler::SchedulerStepRecord> records;
    for (const auto& item : rows) {
      const py::dict d = item.cast<py::dict>();
      profiler::SchedulerStepRecord& r = records.emplace_back();
      r.call = d["call"].cast<int64_t>();
      r.scheduler = d["scheduler"].cast<int32_t>();
      r.name = d["name"].cast<std::string>();
      r.optimizer = d["optimizer"].cast<int32_t>();
      r.step = d["step"].cast<int64_t>();
      r.lr = get_double(d, "lr", std::numeric_limits<double>::quiet_NaN());
    }
    profiler_->on_scheduler_steps(std::move(records));
  }

  // The modules of backward checks, numbered in the order they are named here.
  void backward_module(std::string name) { backward_modules_.push_back(std::move(name)); }

  // A backward pass checked for non-finite gradients (python/ampscope/_backward_origin.py),
  // flat so that a step's hundreds of gradients cross in a few lists: per gradient in
  // backward order, whether it was finite and how many uses follow in `uses`, each
  // name index * 3 + side (0: a module's output, 1: a module's input, 2: the parameter
  // it is the gradient of), and the first non-finite gradient's dtype ("float16"). The
  // origin is found by the same rule as for the built-in engine (locate_backward_inf).
  void backward_check(int64_t step, bool skipped, const std::vector<bool>& finite,
                      const std::vector<int64_t>& use_counts, const std::vector<int64_t>& uses,
                      const std::string& first_nonfinite_dtype) {
    if (finite.size() != use_counts.size()) throw std::invalid_argument("backward_check: one use count per gradient");
    std::vector<profiler::CheckedGradient> checked(finite.size());
    size_t next = 0;
    for (size_t i = 0; i < finite.size(); ++i) {
      checked[i].finite = finite[i];
      for (int64_t k = 0; k < use_counts[i] && next < uses.size(); ++k, ++next) {
        constexpr profiler::GradientSide kSides[] = {profiler::GradientSide::kOutput, profiler::GradientSide::kInput,
                                                     profiler::GradientSide::kParameter};
        checked[i].uses.push_back({static_cast<int32_t>(uses[next] / 3), kSides[uses[next] % 3]});
      }
    }
    const auto first = std::find_if(checked.begin(), checked.end(), [](const auto& g) { return !g.finite; });
    if (first != checked.end()) first->dtype = first_nonfinite_dtype;
    profiler_->on_backward_check(profiler::locate_backward_inf(step, skipped, backward_modules_, checked));
  }

  void set_meta(std::string key, std::string value) { profiler_->set_meta_value(std::move(key), std::move(value)); }
  // Where step memory is read: the device the model's parameters are on, once known.
  void set_memory_device(const std::string& device) { memory_device_ = device; }

  // Closes the session; the current step's ops are kept. Waits for the writer.
  void finish(const std::string& state, const std::string& message) {
    if (finished_ || !started_) return;
    finished_ = true;
    const engine::RunState s = state == "finished" ? engine::RunState::kFinished
                               : state == "stopped" ? engine::RunState::kStopped
                                                    : engine::RunState::kFailed;
    py::gil_scoped_release release;
    profiler_->on_run_end(s, message);
  }

  // The ops of torch.compile's graphs (python/ampscope/_compiled.py), replacing the
  // previous set: dicts with the OpStats fields the graphs tell (no times, no calls)
  // and `graphs`, [(graph, occurrences in it)]. Sent when a graph is compiled.
  void compiled_op_signatures(const py::list& rows) {
    std::vector<profiler::CompiledOpSignature> signatures;
    for (const auto& item : rows) {
      const py::dict d = item.cast<py::dict>();
      profiler::CompiledOpSignature& s = signatures.emplace_back();
      profiler::OpStats& r = s.row;
      r.name = d["name"].cast<std::string>();
      r.module = d["module"].cast<std::string>();
      r.phase = profiler::parse_phase(d["phase"].cast<std::string>()).value_or(profiler::Phase::kOther);
      r.category = profiler::parse_category(d["category"].cast<std::string>()).value_or(profiler::OpCategory::kUnchanged);
      r.input_dtypes = d["input_dtypes"].cast<std::vector<std::string>>();
      r.input_shapes = d["input_shapes"].cast<std::vector<std::vector<int64_t>>>();
      r.output_dtypes = d["output_dtypes"].cast<std::vector<std::string>>();
      r.top_level = true;  // called by the model's code (its time is the compiled region's)
      s.occurrences = d["graphs"].cast<std::vector<std::pair<size_t, int64_t>>>();
    }
    profiler_->set_compiled_op_signatures(std::move(signatures));
  }

  // Each graph's calls on sampled steps, by graph: every step, a few integers. (The
  // GIL stays held: the profiler takes its lock only to swap the list, and handing the
  // GIL over could let another Python thread hold up the training thread.)
  // `warmup_calls`: of those, the warm-up step's (kWarmupStep), left out with its ops.
  void compiled_graph_calls(std::vector<int64_t> calls, std::vector<int64_t> warmup_calls) {
    profiler_->set_compiled_graph_calls(std::move(calls), std::move(warmup_calls));
  }

  // The calls of inductor's compiled graphs (python/ampscope/_compiled_kernels.py),
  // replacing the previous list: dicts {graph, phase, kind, kernel, ordinal, ops}.
  void compiled_kernels(const py::list& rows) {
    std::vector<profiler::CompiledKernelRow> out;
    for (const auto& item : rows) {
      const py::dict d = item.cast<py::dict>();
      profiler::CompiledKernelRow& r = out.emplace_back();
      r.graph = d["graph"].cast<int64_t>();
      r.phase = profiler::parse_phase(d["phase"].cast<std::string>()).value_or(profiler::Phase::kOther);
      r.kind = d["kind"].cast<std::string>();
      r.kernel = d["kernel"].cast<std::string>();
      r.ordinal = d["ordinal"].cast<int64_t>();
      for (const auto& op_item : d["ops"].cast<py::list>()) {
        const py::dict o = op_item.cast<py::dict>();
        r.ops.push_back({o["node"].cast<std::string>(), o["name"].cast<std::string>(),
                         o["module"].cast<std::string>(), o["category"].cast<std::string>(),
                         o["input_dtypes"].cast<std::vector<std::string>>(),
                         o["output_dtypes"].cast<std::vector<std::string>>()});
      }
    }
    profiler_->set_compiled_kernels(std::move(out));
  }

  std::string gpu_tracing() const { return profiler_->gpu_tracing(); }
  uint64_t dropped_batches() const { return profiler_->dropped_batches(); }

 private:
  std::unique_ptr<profiler::Profiler> profiler_;
  std::string description_;
  std::vector<std::string> backward_modules_;  // backward_module's names
  std::string device_ = "cpu";
  std::string memory_device_ = "cpu";
  int64_t step_ = 0;
  bool started_ = false;
  bool first_step_begun_ = false;
  bool finished_ = false;
};

}  // namespace
}  // namespace ampscope::python

PYBIND11_MODULE(_ampscope_capture, m) {
  using namespace ampscope::python;
  m.doc() = "ampscope's capture core for Python training loops (use the ampscope package)";
  m.def("intern_scope", [](const std::string& name) { return ScopeNames::instance().intern(name); });
  m.def("enter_scope", &enter_scope);
  m.def("enter_op_scope", &enter_op_scope);
  m.def("exit_scope", &exit_scope);
  m.def("scope_depth", [] { return t_scopes.size(); });
  m.def("unwind_scopes", &unwind_scopes);
  m.def("set_recording_enabled", &set_recording_enabled);
  m.def("device_model_name", &ampscope::profiler::device_model_name);
  m.def("own_cuda_kernels", &ampscope::profiler::own_cuda_kernels);
  // The stored values of a session's cpu_bf16_matmul / cpu_fp16_matmul, defined once in C++.
  m.attr("CPU_MATMUL_ONEDNN") = ampscope::profiler::kCpuMatmulOneDnn;
  m.attr("COMPILE_OP") = std::string(ampscope::profiler::kTorchCompileOp);
  m.attr("WARMUP_STEP") = ampscope::profiler::kWarmupStep;
  m.attr("CPU_MATMUL_FALLBACK") = ampscope::profiler::kCpuMatmulFallback;
  // The module path of GradScaler's own ops, as the engine's loss scaler names it.
  m.attr("LOSS_SCALER_MODULE") = ampscope::engine::kLossScalerModule;
  m.def("set_autocast_turned_off", &ampscope::profiler::set_autocast_turned_off);
  m.def("autocast_decides", [](const std::string& op, const std::string& device_type) {
    return ampscope::profiler::autocast_decides(op, device_type);
  });
  // The op classifier for the ops of compiled graphs (python/ampscope/_compiled.py):
  // the category string, from the dtypes the graph records.
  // inside_op: a step of a decomposed op (its cast to the precision it computes in).
  // backward_of_promotion: a backward node of a forward op that promoted mixed inputs.
  // autocast_acted: whether autocast cast an input of the op (None: the dtypes decide).
  // autocast_turned_off: the graph's code turned autocast off around the op, which autocast decides.
  m.def(
      "classify_op",
      [](const std::string& name, const std::vector<std::string>& input_dtypes,
         const std::vector<std::string>& output_dtypes, bool cast_by_autocast, bool backward_of_autocast_cast,
         bool inside_op, bool backward_of_promotion, std::optional<bool> autocast_acted, bool autocast_turned_off) {
        ampscope::profiler::CastContext context;
        context.parent_entered_under_autocast = cast_by_autocast;
        context.backward_of_autocast_cast = backward_of_autocast_cast;
        context.inside_cast = inside_op;
        context.backward_of_promotion = backward_of_promotion;
        context.autocast_acted = autocast_acted;
        context.autocast_turned_off = autocast_turned_off;
        return std::string(ampscope::profiler::to_string(
            ampscope::profiler::classify_op(name, input_dtypes, output_dtypes, context)));
      },
      py::arg("name"), py::arg("input_dtypes"), py::arg("output_dtypes"), py::arg("cast_by_autocast"),
      py::arg("backward_of_autocast_cast"), py::arg("inside_op") = false, py::arg("backward_of_promotion") = false,
      py::arg("autocast_acted") = py::none(), py::arg("autocast_turned_off") = false);
  m.def("is_cast_op", [](const std::string& name) { return ampscope::profiler::is_cast_op(name); });
  // The sampling options, declared once in C++ (profiler/capture_option_specs.h):
  // (key, flag, default, minimum, help) for the package's keywords and argparse flags.
  m.attr("CAPTURE_OPTIONS") = [] {
    py::list specs;
    for (const auto& spec : ampscope::profiler::kCaptureOptions)
      specs.append(py::make_tuple(spec.key, spec.flag, spec.default_value, spec.minimum, spec.help));
    return specs;
  }();
  py::class_<Capture>(m, "Capture")
      .def(py::init<const py::dict&>())
      .def("start", &Capture::start, py::arg("device"), py::arg("last_step") = 0)
      .def("begin_first_step", &Capture::begin_first_step)
      .def_property_readonly("step", &Capture::step)
      .def("step_is_sampled", &Capture::step_is_sampled)
      .def("wants_gradients", &Capture::wants_gradients)
      .def("wants_readiness", &Capture::wants_readiness)
      .def("gradients", &Capture::gradients)
      .def("layer_input", &Capture::layer_input)
      .def("wants_activations", &Capture::wants_activations)
      .def("module_output", &Capture::module_output)
      .def("weight_in_by_out", &Capture::weight_in_by_out)
      .def("gemm_weight", &Capture::gemm_weight)
      .def("end_step", &Capture::end_step)
      .def("copy_scaler_state", &Capture::copy_scaler_state)
      .def("newest_stored_step", &Capture::newest_stored_step)
      .def("scheduler_steps", &Capture::scheduler_steps)
      .def("backward_module", &Capture::backward_module)
      .def("backward_check", &Capture::backward_check)
      .def("set_meta", &Capture::set_meta)
      .def("set_memory_device", &Capture::set_memory_device)
      .def("finish", &Capture::finish)
      .def("compiled_op_signatures", &Capture::compiled_op_signatures)
      .def("compiled_graph_calls", &Capture::compiled_graph_calls)
      .def("compiled_kernels", &Capture::compiled_kernels)
      .def_property_readonly("gpu_tracing", &Capture::gpu_tracing)
      .def_property_readonly("dropped_batches", &Capture::dropped_batches);
}
