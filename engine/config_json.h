#pragma once
// A TrainConfig as JSON, for session files and reports.
#include <nlohmann/json.hpp>

#include "engine/config.h"

namespace ampscope::engine {

nlohmann::ordered_json to_json(const TrainConfig& config);

}  // namespace ampscope::engine
