#pragma once
// Writes one JSON object per training step (JSON Lines), in place and one line per
// write(2), so a killed run keeps what it wrote; every write is checked.
#include <nlohmann/json.hpp>

#include <string>

#include "engine/events.h"
#include "profiler/export/export_util.h"

namespace ampscope::cli {

nlohmann::json to_json(const engine::StepEvent& e);

class MetricsWriter {
 public:
  // Throws profiler::StoreError naming the path and the OS error when the file cannot
  // be created, and write() when a line cannot be written (a full disk, a size limit).
  explicit MetricsWriter(const std::string& path);
  void write(const engine::StepEvent& e);

 private:
  profiler::export_detail::AppendedFile out_;
};

}  // namespace ampscope::cli
