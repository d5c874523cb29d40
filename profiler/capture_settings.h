#pragma once
// What a capture records and how often, as one value, and as a session keeps it: what
// `ampscope profile`'s flags, `ampscope.capture()`'s keywords and the GUI's Profiling
// group set (defaults and bounds: capture_option_specs.h), and what ProfilerOptions
// holds, so that a session opened in the GUI can be run again with the settings it was
// recorded with. No LibTorch, no Qt.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
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
  bool trace_gpu = true;  // CUPTI kernel tracing when training on CUDA (`--no-gpu-trace`, `trace_gpu=False`)

  // One of the counts above with its option (keyword, flag, default, minimum, help) and
  // its meta key. Every entry point makes its flags or keywords from these.
  template <typename Value>
  struct Field {
    const CaptureOptionSpec* option;
    const char* meta_key;
    Value* value;
  };
  static constexpr size_t kFieldCount = kCaptureOptions.size();
  // In kCaptureOptions' order.
  std::array<Field<int64_t>, kFieldCount> fields() { return fields_of(*this); }
  std::array<Field<const int64_t>, kFieldCount> fields() const { return fields_of(*this); }

  // "--every must be >= 1" for the first count below its option's minimum; nullopt when
  // every count is allowed.
  std::optional<std::string> error() const {
    for (const auto& field : fields())
      if (auto message = capture_option_error(*field.option, *field.value)) return message;
    return std::nullopt;
  }

  // The session's meta keys and values (written when a recording starts).
  std::array<std::pair<const char*, std::string>, kFieldCount + 1> meta_entries() const {
    std::array<std::pair<const char*, std::string>, kFieldCount + 1> entries;
    const auto counts = fields();
    for (size_t i = 0; i < counts.size(); ++i) entries[i] = {counts[i].meta_key, std::to_string(*counts[i].value)};
    entries[kFieldCount] = {meta_key::kTraceGpu, trace_gpu ? "1" : "0"};
    return entries;
  }
  // The settings a session was recorded with: each one its meta holds replaces this
  // one's (older sessions hold no op window or no trace_gpu: those stay as they are).
  // False when the session holds none of them (no profiler recorded it).
  bool read_meta(const std::map<std::string, std::string>& meta) {
    bool any = false;
    for (const auto& field : fields()) {
      if (const auto v = meta_key::count(meta, field.meta_key)) {
        *field.value = *v;
        any = true;
      }
    }
    if (const auto v = meta_key::count(meta, meta_key::kTraceGpu); v && *v <= 1) {
      trace_gpu = *v == 1;
      any = true;
    }
    return any;
  }

  friend bool operator==(const CaptureSettings&, const CaptureSettings&) = default;

 private:
  // Field<const int64_t> for a const Self.
  template <typename Self>
  using FieldOf = Field<std::remove_reference_t<decltype((std::declval<Self&>().window_start))>>;
  template <typename Self>
  static auto fields_of(Self& s) -> std::array<FieldOf<Self>, kFieldCount> {
    return {{
        {&kWindowStartOption, meta_key::kOpWindowStart, &s.window_start},
        {&kWindowStepsOption, meta_key::kOpWindowSteps, &s.window_steps},
        {&kEveryOption, meta_key::kOpEvery, &s.every_n_steps},
        {&kGradEveryOption, meta_key::kRangeSampleEvery, &s.gradient_every},
        {&kSampleBudgetOption, meta_key::kRangeSampleBudget, &s.sample_budget_percent},
        {&kReadinessEveryOption, meta_key::kReadinessEvery, &s.readiness_every},
    }};
  }
};

}  // namespace ampscope::profiler
