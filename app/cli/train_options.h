#pragma once
// The training flags shared by `train`, `profile` and `compare`.
#include <CLI/CLI.hpp>

#include <string>

#include "engine/config.h"

namespace ampscope::cli {

// Strings and toggles as the user typed them; turned into a TrainConfig by finish().
class TrainOptions {
 public:
  // Adds every training flag to `command`.
  void add_to(CLI::App& command);
  // Checks the combination of flags and returns the config. Throws
  // engine::ConfigError with a one-line message for contradictory flags.
  engine::TrainConfig finish(const CLI::App& command) const;

 private:
  static void check_whole_numbers(CLI::App& command);
  engine::TrainConfig config_;
  std::string model_ = "mlp", data_ = "synthetic", precision_ = "fp32", device_ = "auto";
  std::string optimizer_ = "adamw", schedule_ = "constant", attention_ = "sdpa";
  std::string recipe_ = "standard", inject_inf_;
  bool scaler_on_ = false, scaler_off_ = false, untied_head_ = false;
};

}  // namespace ampscope::cli
