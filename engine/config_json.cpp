#include "engine/config_json.h"

namespace ampscope::engine {

nlohmann::ordered_json to_json(const TrainConfig& c) {
  nlohmann::ordered_json j;
  j["model"] = {{"kind", to_string(c.model.kind)},     {"layers", c.model.layers},
                {"width", c.model.width},              {"heads", c.model.heads},
                {"seq_len", c.model.seq_len},          {"tied_head", c.model.tied_head},
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
                    {"min_lr_ratio", c.optim.min_lr_ratio}};
  j["steps"] = c.steps;
  j["batch_size"] = c.batch_size;
  j["accumulation_steps"] = c.accumulation_steps;
  j["clip_grad_norm"] = c.clip_grad_norm;
  j["allow_tf32"] = c.allow_tf32;
  j["seed"] = c.seed;
  j["max_consecutive_skips"] = c.max_consecutive_skips;
  return j;
}

}  // namespace ampscope::engine
