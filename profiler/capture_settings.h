#pragma once
// The capture's sampling settings as one value, and as a session keeps them. What
// `ampscope profile`'s flags, `ampscope.capture()`'s keywords and the GUI's Profiling
// group set (defaults and bounds: capture_option_specs.h), so that a session opened
// in the GUI can be run again with the settings it was recorded with.
// No LibTorch, no Qt.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "profiler/capture_option_specs.h"
#include "profiler/session_meta_keys.h"

namespace ampscope::profiler {

struct CaptureSettings {
  int64_t window_start = kWindowStartOption.default_value;    // first step whose ops are recorded
  int64_t window_steps = kWindowStepsOption.default_value;    // steps from window_start; 0 = to the end
  int64_t every_n_steps = kEveryOption.default_value;         // ops of every Nth step inside the window
  int64_t gradient_every = kGradEveryOption.default_value;    // range samples every K steps; 0 = off
  int64_t sample_budget_percent = kSampleBudgetOption.default_value;  // range_sample_spacing.h; 0 = every K
  int64_t readiness_every = kReadinessEveryOption.default_value;      // on every Nth range sample; 0 = off

  // Any options type with these field names (ProfilerOptions): to it and from it.
  template <typename Options>
  void apply_to(Options& options) const {
    options.window_start = window_start;
    options.window_steps = window_steps;
    options.every_n_steps = every_n_steps;
    options.gradient_every = gradient_every;
    options.sample_budget_percent = sample_budget_percent;
    options.readiness_every = readiness_every;
  }
  template <typename Options>
  static CaptureSettings of(const Options& options) {
    return {options.window_start,   options.window_steps,          options.every_n_steps,
            options.gradient_every, options.sample_budget_percent, options.readiness_every};
  }

  // The session's meta keys and values (written when a recording starts).
  std::array<std::pair<const char*, std::string>, 6> meta_entries() const {
    std::array<std::pair<const char*, std::string>, 6> entries;
    const auto fields = fields_by_key(*this);
    for (size_t i = 0; i < fields.size(); ++i) entries[i] = {fields[i].first, std::to_string(*fields[i].second)};
    return entries;
  }
  // The settings a session was recorded with: each one its meta holds replaces this
  // one's (sessions before 2026-11-28 hold no op window: that stays as it is). False
  // when the session holds none of them (no profiler recorded it).
  bool read_meta(const std::map<std::string, std::string>& meta) {
    bool any = false;
    for (const auto& [key, field] : fields_by_key(*this)) {
      if (const auto v = meta_key::count(meta, key)) {
        *field = *v;
        any = true;
      }
    }
    return any;
  }

  friend bool operator==(const CaptureSettings&, const CaptureSettings&) = default;

 private:
  // Each setting's meta key and the setting (int64_t*, or const int64_t* for a const Self).
  template <typename Self>
  static auto fields_by_key(Self& s) -> std::array<std::pair<const char*, decltype(&s.window_start)>, 6> {
    return {{
        {meta_key::kOpWindowStart, &s.window_start},
        {meta_key::kOpWindowSteps, &s.window_steps},
        {meta_key::kOpEvery, &s.every_n_steps},
        {meta_key::kRangeSampleEvery, &s.gradient_every},
        {meta_key::kRangeSampleBudget, &s.sample_budget_percent},
        {meta_key::kReadinessEvery, &s.readiness_every},
    }};
  }
};

}  // namespace ampscope::profiler
