// A user's model saved with torch.jit.save / torch.jit.script(...).save(). Only this file
// includes <torch/script.h>: it is the costliest LibTorch header to compile.
#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <torch/script.h>

#include <string>

#include "engine/errors.h"
#include "engine/models/nn_model.h"

namespace ampscope::engine::models {
namespace {

// c10 messages run over several lines (call stacks, source excerpts); the first says what
// went wrong, except for the interpreter's, which end with it ("RuntimeError: mat1 and ...").
std::string summary(const std::string& what) {
  const auto end = what.find('\n');
  if (end == std::string::npos) return what;
  if (what.starts_with("The following operation failed in the TorchScript interpreter")) {
    const auto last = what.find_last_not_of("\n ");
    const auto start = what.rfind('\n', last);
    if (last != std::string::npos && start != std::string::npos) {
      return what.substr(start + 1, last - start);
    }
  }
  return what.substr(0, end);
}

std::string first_line(const c10::Error& e) { return summary(e.what_without_backtrace()); }

class TorchScriptModel final : public Model {
 public:
  TorchScriptModel(torch::jit::Module module, std::string path)
      : module_(std::move(module)), path_(std::move(path)) {
    const std::string file = path_.substr(path_.find_last_of('/') + 1);
    description_ = fmt::format(
        "TorchScript {} ({} params; TorchScript is deprecated upstream, "
        "PyTorch recommends torch.export)",
        file, format_count(parameter_count()));
  }

  at::Tensor forward(const at::Tensor& input) override {
    c10::IValue out;
    try {
      out = module_.forward({input});
    } catch (const c10::OutOfMemoryError&) {
      throw;  // the trainer reports running out of memory as such
    } catch (const c10::Error& e) {
      throw ModelError(
          fmt::format("TorchScript model '{}' failed in forward: {}", path_, first_line(e)));
    } catch (const std::exception& e) {
      // The interpreter rethrows what fails inside it as std::runtime_error.
      throw ModelError(
          fmt::format("TorchScript model '{}' failed in forward: {}", path_, summary(e.what())));
    }
    if (!out.isTensor()) {
      throw ModelError(fmt::format(
          "TorchScript model '{}' returned {} from forward; ampscope needs a single Tensor", path_,
          out.tagKind()));
    }
    return out.toTensor();
  }

  std::vector<std::pair<std::string, at::Tensor>> named_parameters() override {
    std::vector<std::pair<std::string, at::Tensor>> out;
    for (const auto& p : module_.named_parameters(/*recurse=*/true)) {
      if (p.value.requires_grad()) out.emplace_back(p.name, p.value);
    }
    return out;
  }

  void to(c10::Device device) override {
    try {
      module_.to(device);
    } catch (const c10::Error& e) {
      throw ModelError(fmt::format("TorchScript model '{}' cannot move to {}: {}", path_,
                                   device.str(), first_line(e)));
    }
  }

  void set_training(bool training) override { module_.train(training); }
  std::string description() const override { return description_; }

 private:
  torch::jit::Module module_;
  std::string path_;
  std::string description_;
};

}  // namespace

std::unique_ptr<Model> make_torchscript(const ModelConfig& config, const SampleSpec& spec) {
  const std::string& path = config.torchscript_path;
  if (path.empty()) {
    throw ModelError("the TorchScript model needs a file: pass --torchscript <model.pt>");
  }
  // stat, not std::filesystem: the PyTorch wheels' libtorch.so exports its own statically linked
  // copies of the std::filesystem functions, which the dynamic linker may pick over libstdc++'s
  // (pytorch/pytorch#133437); some of them crash.
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    throw ModelError(fmt::format("TorchScript model '{}': no such file; pass --torchscript the file "
                                 "torch.jit.save wrote", path));
  }
  if (!S_ISREG(info.st_mode)) {
    throw ModelError(fmt::format("TorchScript model '{}': {}, not a file; pass --torchscript the file "
                                 "torch.jit.save wrote", path, S_ISDIR(info.st_mode) ? "a directory" : "a special file"));
  }
  try {
    torch::jit::Module module = torch::jit::load(path);
    return std::make_unique<TorchScriptModel>(std::move(module), path);
  } catch (const c10::Error& e) {
    throw ModelError(fmt::format("'{}' is not a TorchScript file: {}", path, first_line(e)));
  } catch (const std::exception& e) {
    throw ModelError(fmt::format("cannot load TorchScript file '{}': {}", path, summary(e.what())));
  }
}

}  // namespace ampscope::engine::models
