#include "profiler/script_facts.h"

#include "profiler/session_meta_keys.h"

namespace ampscope::profiler {
namespace {

std::string value_of(const std::map<std::string, std::string>& meta, const char* key) {
  const auto it = meta.find(key);
  return it == meta.end() ? std::string() : it->second;
}

}  // namespace

std::optional<ScriptFacts> script_facts(const std::map<std::string, std::string>& meta) {
  if (value_of(meta, meta_key::kKind) != meta_key::kKindPython) return std::nullopt;
  ScriptFacts f;
  f.script = value_of(meta, meta_key::kScript);
  f.arguments = value_of(meta, meta_key::kArguments);
  if (f.script.empty()) {  // a session recorded before these keys: the command line as one string
    const std::string argv = value_of(meta, meta_key::kArgv);
    const size_t space = argv.find(' ');
    f.script = argv.substr(0, space);
    if (space != std::string::npos) f.arguments = argv.substr(space + 1);
  }
  f.model = value_of(meta, meta_key::kModel);
  f.precision = value_of(meta, meta_key::kPrecision);
  if (f.precision.empty()) f.precision = "fp32";
  f.scaler = value_of(meta, meta_key::kScalerEnabled) == "true";
  f.optimizers = value_of(meta, meta_key::kOptimizers);
  f.device = value_of(meta, meta_key::kDevice);
  f.grad_norm_measured = value_of(meta, meta_key::kGradNormSource) == "clip_grad_norm_";
  f.grad_norm = f.grad_norm_measured
                    ? "the total norm torch.nn.utils.clip_grad_norm_ returned"
                    : "not measured: the script does not clip gradients (ampscope shows the norm clip_grad_norm_ returns)";
  return f;
}

std::vector<std::pair<std::string, std::string>> fact_rows(const ScriptFacts& f) {
  return {{"script", f.script.empty() ? "?" : f.script},
          {"arguments", f.arguments.empty() ? "none" : f.arguments},
          {"model", f.model.empty() ? "none seen" : f.model},
          {"precision", f.precision == "fp32" ? "fp32 (no autocast region seen)" : f.precision + " autocast"},
          {"loss scaler", f.scaler ? "torch.amp.GradScaler" : "none seen"},
          {"optimizers", f.optimizers.empty() ? "none seen" : f.optimizers},
          {"device", f.device.empty() ? "?" : f.device},
          {"gradient norm", f.grad_norm}};
}

}  // namespace ampscope::profiler
