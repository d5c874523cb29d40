#include "engine/config_json.h"

#include <fmt/format.h>

#include "engine/errors.h"

namespace ampscope::engine {

nlohmann::ordered_json to_json(const TrainConfig& c) {
  nlohmann::ordered_json j;
  j["model"] = {{"kind", to_string(c.model.kind)},     {"layers", c.model.layers},
                {"width", c.model.width},              {"heads", c.model.heads},
                {"seq_len", c.model.seq_len},          {"tied_head", c.model.tied_head},
                {"attention", to_string(c.model.attention)},
                {"channels_last", c.model.channels_last},
                {"torchscript", c.model.torchscript_path}};
  j["data"] = {{"kind", to_string(c.data.kind)},
               {"path", c.data.path},
               {"labels_path", c.data.labels_path},
               {"synthetic_samples", c.data.synthetic_samples},
               {"vocab_size", c.data.vocab_size},
               {"csv_target_column", c.data.csv_target_column}};
  j["precision"] = to_string(c.precision);
  j["device"] = to_string(c.device);
  j["scaler"] = {{"enabled", c.scaler_enabled()},
                 {"init_scale", c.scaler.init_scale},
                 {"growth_factor", c.scaler.growth_factor},
                 {"backoff_factor", c.scaler.backoff_factor},
                 {"growth_interval", c.scaler.growth_interval}};
  j["optimizer"] = {{"kind", to_string(c.optim.kind)},
                    {"lr", c.optim.lr},
                    {"momentum", c.optim.momentum},
                    {"weight_decay", c.optim.weight_decay},
                    {"betas", {c.optim.beta1, c.optim.beta2}},
                    {"eps", c.optim.eps},
                    {"schedule", to_string(c.optim.schedule)},
                    {"warmup_steps", c.optim.warmup_steps},
                    {"min_lr_ratio", c.optim.min_lr_ratio},
                    {"fused", c.optim.fused}};
  j["steps"] = c.steps;
  j["batch_size"] = c.batch_size;
  j["accumulation_steps"] = c.accumulation_steps;
  j["clip_grad_norm"] = c.clip_grad_norm;
  j["allow_tf32"] = c.allow_tf32;
  j["seed"] = c.seed;
  j["max_consecutive_skips"] = c.max_consecutive_skips;
  j["eval_every"] = c.eval_every;
  j["eval_batches"] = c.eval_batches;
  j["recipe"] = to_string(c.recipe);
  j["inject_inf"] = nlohmann::ordered_json::array();
  for (const InfInjection& i : c.inject_inf) j["inject_inf"].push_back({{"step", i.step}, {"model", i.model}});
  return j;
}

namespace {

using Json = nlohmann::json;

// Copies j[key] into out when present; a value of another type is an error naming the field.
template <typename T>
void read(const Json& j, const char* key, T& out, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    out = it->get<T>();
  } catch (const Json::exception&) {
    throw ConfigError(fmt::format("the saved settings have a malformed '{}{}'", where, key));
  }
}

template <typename Enum, typename Parse>
void read_name(const Json& j, const char* key, Enum& out, Parse parse, const std::string& where) {
  std::string name;
  read(j, key, name, where);
  if (name.empty()) return;
  const auto parsed = parse(name);
  if (!parsed) throw ConfigError(fmt::format("the saved settings name an unknown {}{} '{}'", where, key, name));
  out = *parsed;
}

const Json& object(const Json& j, const char* key) {
  static const Json empty = Json::object();
  const auto it = j.find(key);
  if (it == j.end()) return empty;
  if (!it->is_object()) throw ConfigError(fmt::format("the saved settings have a malformed '{}'", key));
  return *it;
}

}  // namespace

TrainConfig config_from_json(std::string_view text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw ConfigError(fmt::format("the saved settings are not valid JSON (byte {})", e.byte));
  }
  if (!j.is_object()) throw ConfigError("the saved settings are not a JSON object");
  TrainConfig c;
  const Json& model = object(j, "model");
  read_name(model, "kind", c.model.kind, parse_model, "model.");
  read(model, "layers", c.model.layers, "model.");
  read(model, "width", c.model.width, "model.");
  read(model, "heads", c.model.heads, "model.");
  read(model, "seq_len", c.model.seq_len, "model.");
  read(model, "tied_head", c.model.tied_head, "model.");
  // Settings saved before the field existed come from runs whose attention was written out.
  if (c.model.kind == ModelKind::kGPT && !model.contains("attention")) c.model.attention = AttentionKind::kMath;
  read_name(model, "attention", c.model.attention, parse_attention, "model.");
  read(model, "channels_last", c.model.channels_last, "model.");
  read(model, "torchscript", c.model.torchscript_path, "model.");
  const Json& data = object(j, "data");
  read_name(data, "kind", c.data.kind, parse_data, "data.");
  read(data, "path", c.data.path, "data.");
  read(data, "labels_path", c.data.labels_path, "data.");
  read(data, "synthetic_samples", c.data.synthetic_samples, "data.");
  read(data, "vocab_size", c.data.vocab_size, "data.");
  read(data, "csv_target_column", c.data.csv_target_column, "data.");
  read_name(j, "precision", c.precision, parse_precision, "");
  read_name(j, "device", c.device, parse_device, "");
  const Json& scaler = object(j, "scaler");
  if (scaler.contains("enabled")) {
    bool enabled = false;
    read(scaler, "enabled", enabled, "scaler.");
    c.use_scaler = enabled;
  }
  read(scaler, "init_scale", c.scaler.init_scale, "scaler.");
  read(scaler, "growth_factor", c.scaler.growth_factor, "scaler.");
  read(scaler, "backoff_factor", c.scaler.backoff_factor, "scaler.");
  read(scaler, "growth_interval", c.scaler.growth_interval, "scaler.");
  const Json& optim = object(j, "optimizer");
  read_name(optim, "kind", c.optim.kind, parse_optimizer, "optimizer.");
  read(optim, "lr", c.optim.lr, "optimizer.");
  read(optim, "momentum", c.optim.momentum, "optimizer.");
  read(optim, "weight_decay", c.optim.weight_decay, "optimizer.");
  std::vector<double> betas;
  read(optim, "betas", betas, "optimizer.");
  if (!betas.empty()) {
    if (betas.size() != 2) throw ConfigError("the saved settings have a malformed 'optimizer.betas'");
    c.optim.beta1 = betas[0];
    c.optim.beta2 = betas[1];
  }
  read(optim, "eps", c.optim.eps, "optimizer.");
  read_name(optim, "schedule", c.optim.schedule, parse_schedule, "optimizer.");
  read(optim, "warmup_steps", c.optim.warmup_steps, "optimizer.");
  read(optim, "min_lr_ratio", c.optim.min_lr_ratio, "optimizer.");
  read(optim, "fused", c.optim.fused, "optimizer.");
  read(j, "steps", c.steps, "");
  read(j, "batch_size", c.batch_size, "");
  read(j, "accumulation_steps", c.accumulation_steps, "");
  read(j, "clip_grad_norm", c.clip_grad_norm, "");
  read(j, "allow_tf32", c.allow_tf32, "");
  read(j, "seed", c.seed, "");
  read(j, "max_consecutive_skips", c.max_consecutive_skips, "");
  read(j, "eval_every", c.eval_every, "");
  read(j, "eval_batches", c.eval_batches, "");
  read_name(j, "recipe", c.recipe, parse_recipe, "");
  if (const auto inject = j.find("inject_inf"); inject != j.end() && inject->is_array()) {
    for (const auto& item : *inject) {
      InfInjection i;
      read(item, "step", i.step, "inject_inf.");
      read(item, "model", i.model, "inject_inf.");
      c.inject_inf.push_back(i);
    }
  }
  return c;
}

}  // namespace ampscope::engine
