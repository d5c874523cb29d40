#pragma once
// Writes one JSON object per training step (JSON Lines), flushed every line so a
// killed run keeps what it wrote.
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "engine/events.h"

namespace ampscope::cli {

nlohmann::json to_json(const engine::StepEvent& e);

class MetricsWriter {
 public:
  // Throws engine::ConfigError when the file cannot be opened for writing.
  explicit MetricsWriter(const std::string& path);
  void write(const engine::StepEvent& e);

 private:
  std::string path_;
  std::ofstream out_;
};

}  // namespace ampscope::cli
