#pragma once
// A TrainConfig as JSON, for session files and reports, and back (a session's
// settings in the GUI's run panel, a comparison re-run).
#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/config.h"

namespace ampscope::engine {

nlohmann::ordered_json to_json(const TrainConfig& config);
// The inverse of to_json: fields that are absent keep TrainConfig's defaults (files
// written by older builds). The scaler's "enabled" becomes an explicit use_scaler.
// Throws ConfigError with a one-line message for malformed JSON, a field of the
// wrong type or an unknown name; the result is not validate()d.
TrainConfig config_from_json(std::string_view json);

}  // namespace ampscope::engine
