#include "profiler/range_sample_phases.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <utility>

#include "profiler/number_text.h"

namespace ampscope::profiler {

void RangeSamplePhases::add(const RangeSamplePhases& sample) {
  samples += sample.samples;
  gradients_ms += sample.gradients_ms;
  activations_ms += sample.activations_ms;
  readiness_ms += sample.readiness_ms;
}

std::string RangeSamplePhases::encode() const {
  return "samples:" + std::to_string(samples) + ";gradients:" + text::fixed(gradients_ms, 3) +
         ";activations:" + text::fixed(activations_ms, 3) + ";readiness:" + text::fixed(readiness_ms, 3);
}

std::optional<RangeSamplePhases> RangeSamplePhases::decode(const std::string& text) {
  RangeSamplePhases p;
  const std::array<std::pair<const char*, double*>, 3> phases{
      {{"gradients", &p.gradients_ms}, {"activations", &p.activations_ms}, {"readiness", &p.readiness_ms}}};
  bool has_samples = false;
  std::stringstream all(text);
  std::string item;
  while (std::getline(all, item, ';')) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos) return std::nullopt;
    const std::string key = item.substr(0, colon);
    std::stringstream value(item.substr(colon + 1));
    if (key == "samples") {
      if (!(value >> p.samples) || p.samples < 0) return std::nullopt;
      has_samples = true;
      continue;
    }
    // A phase a later version adds is skipped; a known one must be a number.
    for (const auto& [name, field] : phases)
      if (key == name && (!(value >> *field) || !std::isfinite(*field) || *field < 0)) return std::nullopt;
  }
  if (!has_samples) return std::nullopt;
  return p;
}

std::string RangeSamplePhases::describe() const {
  if (samples <= 0) return "";
  std::array<std::pair<double, const char*>, 3> phases{
      {{readiness_ms, "readiness"}, {activations_ms, "activations"}, {gradients_ms, "gradients"}}};
  std::stable_sort(phases.begin(), phases.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const double n = static_cast<double>(samples);
  std::string out = "a sample's own passes on the training thread (mean of " + std::to_string(samples) + "): ";
  for (size_t i = 0; i < phases.size(); ++i)
    out += (i ? ", " : "") + std::string(phases[i].second) + " " + text::fixed(phases[i].first / n, 1) + " ms";
  return out;
}

}  // namespace ampscope::profiler
