#include "profiler/script_facts.h"

#include <algorithm>
#include <cstdint>
#include <exception>

#include <nlohmann/json.hpp>

#include "profiler/recording_health.h"
#include "profiler/session_meta_keys.h"

namespace ampscope::profiler {
namespace {

std::string value_of(const std::map<std::string, std::string>& meta, const char* key) {
  const auto it = meta.find(key);
  return it == meta.end() ? std::string() : it->second;
}

// How the run the file records ended, with why; while its writer (`what`: the script, or a
// comparison of it) runs on this host, that it has not yet.
std::string ended_text(const std::map<std::string, std::string>& meta, const std::string& what) {
  const std::string state = value_of(meta, meta_key::kFinalState);
  const std::string message = value_of(meta, meta_key::kFinalMessage);
  if (!state.empty()) return message.empty() ? state : state + ": " + message;
  if (session_writer_runs(meta)) return "not yet: the " + what + " runs (pid " + value_of(meta, meta_key::kPid) + ")";
  return "not closed: the " + what + " was killed, or is still running";
}

}  // namespace

std::optional<ScriptCommand> parse_script_command(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  const auto string_at = [&](const char* key) -> const nlohmann::json* {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? &*it : nullptr;
  };
  const auto* python = string_at("python");
  const auto* directory = string_at("working_directory");
  const auto* script = string_at("script");
  const auto module = j.find("module");
  const auto arguments = j.find("arguments");
  if (!python || !directory || !script || script->get_ref<const std::string&>().empty() || module == j.end() ||
      !module->is_boolean() || arguments == j.end() || !arguments->is_array())
    return std::nullopt;
  ScriptCommand c;
  c.python = python->get<std::string>();
  c.working_directory = directory->get<std::string>();
  c.module = module->get<bool>();
  c.script = script->get<std::string>();
  for (const auto& a : *arguments) {
    if (!a.is_string()) return std::nullopt;
    c.arguments.push_back(a.get<std::string>());
  }
  if (const auto ranks = j.find("ranks"); ranks != j.end()) {
    const auto count_at = [&](const char* key) -> int64_t {
      const auto it = ranks->is_object() ? ranks->find(key) : ranks->end();
      return it != ranks->end() && it->is_number_integer() ? it->get<int64_t>() : 0;
    };
    c.world_size = count_at("world_size");
    c.local_world_size = count_at("local_world_size");
    c.rank = ranks->is_object() && ranks->contains("rank") ? count_at("rank") : -1;
    if (c.world_size < 2 || c.local_world_size < 1 || c.world_size % c.local_world_size != 0 || c.rank < 0 ||
        c.rank >= c.world_size)
      return std::nullopt;
  }
  return c;
}

std::string ranks_text(const ScriptFacts& f) {
  if (!f.command || f.command->world_size < 2) return "";
  const ScriptCommand& c = *f.command;
  const std::string under = " under torchrun (" + std::to_string(c.local_world_size) + " per machine)";
  if (!f.compared.empty())
    return "each run " + std::to_string(c.world_size) + " ranks" + under +
           ": a step takes the slowest rank's time, counts all ranks' samples and their mean loss; the op table "
           "is rank 0's";
  // One of several processes, the others' files beside it.
  return "rank " + std::to_string(c.rank) + " of " + std::to_string(c.world_size) + under +
         "; open the ranks' files together to compare them";
}

std::string reduced_parameters(const std::string& dtypes) {
  int64_t total = 0, bf16 = 0, fp16 = 0;
  for (size_t at = 0; at < dtypes.size();) {
    size_t end = dtypes.find(',', at);
    if (end == std::string::npos) end = dtypes.size();
    const std::string entry = dtypes.substr(at, end - at);
    at = end + 1;
    const size_t colon = entry.rfind(':');
    if (colon == std::string::npos) continue;
    int64_t n = 0;
    try {
      n = std::stoll(entry.substr(colon + 1));
    } catch (const std::exception&) {
      continue;
    }
    total += n;
    const std::string dtype = entry.substr(0, colon);
    if (dtype == "bfloat16") bf16 += n;
    if (dtype == "float16") fp16 += n;
  }
  return 2 * bf16 > total ? "bf16" : 2 * fp16 > total ? "fp16" : "";
}

std::string ScriptFacts::fsdp_compute_precision() const {
  std::string dtype;
  for (const FsdpPolicy& p : fsdp) {
    if (p.param_dtype.empty()) continue;
    if (!dtype.empty() && dtype != p.param_dtype) return "";  // policies that disagree: no one precision
    dtype = p.param_dtype;
  }
  return dtype == "bf16" || dtype == "fp16" ? dtype : "";
}

bool ScriptFacts::scaler_syncs_ranks() const {
  // FSDP's ShardedGradScaler, or a script's class derived from it ("train.MyScaler (a ...ShardedGradScaler)").
  return scaler && scaler_class.find("ShardedGradScaler") != std::string::npos;
}

std::string ScriptFacts::compute_precision() const {
  if (precision != "fp32") return precision;
  if (!reduced_parameters.empty()) return reduced_parameters;
  const std::string fsdp = fsdp_compute_precision();
  return fsdp.empty() ? precision : fsdp;
}

namespace {

// meta_key::kSharding's object into the facts; a damaged value leaves them empty.
void read_sharding(const std::string& text, ScriptFacts& f) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return;
  const auto string_at = [](const nlohmann::json& o, const char* key) {
    const auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (const auto policies = j.find("fsdp"); policies != j.end() && policies->is_array()) {
    for (const nlohmann::json& p : *policies) {
      if (!p.is_object()) continue;
      FsdpPolicy policy{string_at(p, "api"), string_at(p, "param_dtype"),
                        string_at(p, "reduce_dtype"), string_at(p, "output_dtype")};
      if (const auto n = p.find("modules"); n != p.end() && n->is_number_integer())
        policy.modules = n->get<int64_t>();
      if (!policy.api.empty()) f.fsdp.push_back(std::move(policy));
    }
  }
  if (const auto n = j.find("sharded_parameters"); n != j.end() && n->is_number_integer())
    f.sharded_parameters = n->get<int64_t>();
}

// meta_key::kClipBeforeUnscale's object; nullopt where absent or damaged.
std::optional<ScriptFacts::ClipBeforeUnscale> read_clip_before_unscale(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  ScriptFacts::ClipBeforeUnscale c;
  const auto steps = j.find("steps"), first = j.find("first_step"), max_norm = j.find("max_norm");
  if (steps == j.end() || !steps->is_number_integer() || first == j.end() || !first->is_number_integer())
    return std::nullopt;
  c.steps = steps->get<int64_t>();
  c.first_step = first->get<int64_t>();
  if (max_norm != j.end() && max_norm->is_number()) c.max_norm = max_norm->get<double>();
  if (c.steps <= 0) return std::nullopt;
  return c;
}

// "FSDP (fully_shard) on 3 modules: param_dtype bf16, reduce_dtype fp32; …": how FSDP holds
// and casts the models' parameters, and what the range samples read of them.
std::string sharding_text(const ScriptFacts& f) {
  std::string text;
  for (const FsdpPolicy& p : f.fsdp) {
    if (!text.empty()) text += "; ";
    text += "FSDP (" + p.api + ") on " + std::to_string(p.modules) +
            (p.modules == 1 ? " module" : " modules");
    if (p.param_dtype.empty() && p.reduce_dtype.empty() && p.output_dtype.empty()) {
      text += ", no mixed precision";
      continue;
    }
    text += ": param_dtype " + (p.param_dtype.empty() ? "as the parameters" : p.param_dtype) +
            ", reduce_dtype " + (p.reduce_dtype.empty() ? "as param_dtype" : p.reduce_dtype);
    if (!p.output_dtype.empty()) text += ", output_dtype " + p.output_dtype;
  }
  if (f.sharded_parameters > 0)
    text += std::string(text.empty() ? "DTensor parameters: " : "; ") +
            "the range samples read this rank's shard of each gradient";
  return text;
}

// As run, then why: the script's regions set to another precision by `ampscope run --precision`.
std::string overridden_precision_text(const ScriptFacts& f) {
  const std::string asked = f.precision_asked.empty() ? "" : ", asked for " + f.precision_asked;
  if (f.precision_override == "fp32" || f.precision_override == "tf32")
    return (f.precision_override == "tf32" ? "tf32: fp32 with TF32 matmuls and convolutions" : "fp32") +
           std::string(", set by --precision ") + f.precision_override + " (the script's autocast regions" + asked +
           ", turned off)";
  return f.precision + " autocast, set by --precision " + f.precision_override + " (the script's regions" + asked +
         ")";
}

std::string precision_text(const ScriptFacts& f) {
  if (!f.compared.empty())
    return "compared: " + compared_precisions(f) + " (each run's autocast regions set by --precision" +
           (f.precision_asked.empty() ? "" : "; the script's asked for " + f.precision_asked) + ")";
  if (!f.precision_override.empty()) return overridden_precision_text(f);
  const std::string& reduced = f.reduced_parameters;
  // FSDP's mixed precision: its casts of the parameters, not autocast, lower the compute.
  if (const std::string fsdp = f.fsdp_compute_precision(); !fsdp.empty() && reduced.empty())
    return f.precision == "fp32"
               ? fsdp + " compute on fp32 parameters: FSDP's mixed precision (param_dtype " + fsdp +
                     "), no autocast"
               : f.precision + " autocast, under FSDP's mixed precision (param_dtype " + fsdp + ")";
  if (f.precision == "fp32" && reduced.empty())
    return f.autocast_disabled.empty()
               ? "fp32 (no autocast region seen)"
               : "fp32: the script entered autocast with enabled=False (" + f.autocast_disabled + ")";
  if (f.precision == "fp32")
    return reduced + " parameters, no autocast (the model itself is " + reduced + ": no fp32 master weights)";
  return f.precision + " autocast" +
         (reduced.empty() ? "" : ", on " + reduced + " parameters (no fp32 master weights)");
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
  f.autocast_disabled = value_of(meta, meta_key::kAutocastDisabled);
  f.precision_override = value_of(meta, meta_key::kPrecisionOverride);
  f.precision_asked = value_of(meta, meta_key::kPrecisionAsked);
  f.reduced_parameters = reduced_parameters(value_of(meta, meta_key::kParameterDtypes));
  read_sharding(value_of(meta, meta_key::kSharding), f);
  f.scaler = value_of(meta, meta_key::kScalerEnabled) == "true";
  f.scaler_class = value_of(meta, meta_key::kScalerClass);
  if (f.scaler && f.scaler_class.empty()) f.scaler_class = "torch.amp.GradScaler";  // written before the key
  f.optimizers = value_of(meta, meta_key::kOptimizers);
  f.device = value_of(meta, meta_key::kDevice);
  f.grad_norm_measured = value_of(meta, meta_key::kGradNormSource) == "clip_grad_norm_";
  f.ended = ended_text(meta, "script");
  f.command = parse_script_command(value_of(meta, meta_key::kScriptCommand));
  f.capture.read_meta(meta);
  f.max_steps = meta_key::count(meta, meta_key::kMaxSteps).value_or(0);  // absent: no limit
  f.clip_before_unscale = read_clip_before_unscale(value_of(meta, meta_key::kClipBeforeUnscale));
  f.grad_norm = f.grad_norm_measured
                    ? "the total norm torch.nn.utils.clip_grad_norm_ returned"
                    : "at range-sampled steps only, from the sampled gradients: the script does not clip gradients "
                      "(where a script clips, ampscope shows the norm clip_grad_norm_ returns at every step)";
  if (f.clip_before_unscale)  // the norm of the scaled gradients: shown over the scale, as the gradients' own
    f.grad_norm += ", divided by the loss scale: the script clipped before scaler.unscale_";
  return f;
}

std::optional<ScriptFacts> compared_script_facts(const std::map<std::string, std::string>& meta,
                                                 const std::vector<std::string>& variants) {
  if (value_of(meta, meta_key::kScript).empty()) return std::nullopt;  // the built-in models'
  std::map<std::string, std::string> as_session = meta;
  as_session[meta_key::kKind] = meta_key::kKindPython;
  std::optional<ScriptFacts> f = script_facts(as_session);
  f->compared = variants;
  f->grad_norm = "not measured: a comparison's runs take no range samples";
  f->ended = ended_text(meta, "comparison");  // its own end (`ampscope run --compare` writes it), not a run's
  // The comparison sets its runs' sampling; kernel tracing (kTraceGpu, read above) is its profiled
  // runs', which `ampscope run --compare` writes itself.
  f->capture = CaptureSettings{.trace_gpu = f->capture.trace_gpu};
  return f;
}

std::string compared_precisions(const ScriptFacts& facts) {
  std::string text;
  for (const std::string& v : facts.compared) text += (text.empty() ? "" : ", ") + v;
  return text;
}

std::vector<std::pair<std::string, std::string>> fact_rows(const ScriptFacts& f) {
  std::vector<std::pair<std::string, std::string>> rows = {{"script", f.script.empty() ? "?" : f.script},
          {"arguments", f.arguments.empty() ? "none" : f.arguments},
          {"model", f.model.empty() ? "none seen" : f.model},
          {"precision", precision_text(f)},
          {"loss scaler", f.scaler ? f.scaler_class : "none seen"},
          {"optimizers", f.optimizers.empty() ? "none seen" : f.optimizers},
          {"device", f.device.empty() ? "?" : f.device},
          {"gradient norm", f.grad_norm},
          {"ended", f.ended}};
  const auto after = [&](const char* label) {
    return std::find_if(rows.begin(), rows.end(), [&](const auto& row) { return row.first == label; }) + 1;
  };
  if (const std::string sharding = sharding_text(f); !sharding.empty())
    rows.insert(after("precision"), {"sharding", sharding});
  if (const std::string ranks = ranks_text(f); !ranks.empty()) rows.insert(after("device"), {"ranks", ranks});
  return rows;
}

}  // namespace ampscope::profiler
