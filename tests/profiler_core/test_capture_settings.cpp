// The capture's settings as a session keeps them: what `profile`, `ampscope.capture()`
// and the GUI asked for, read back so the GUI's Start runs an opened session again as
// it was recorded (its run panel took the training settings but not these).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "profiler/capture_settings.h"

namespace ampscope::profiler {
namespace {

std::map<std::string, std::string> as_meta(const CaptureSettings& s) {
  std::map<std::string, std::string> meta;
  for (const auto& [key, value] : s.meta_entries()) meta[key] = value;
  return meta;
}

TEST(CaptureSettings, EverySettingGoesIntoTheSessionAndComesBack) {
  const CaptureSettings asked{.window_start = 20, .window_steps = 50, .every_n_steps = 3,
                              .gradient_every = 7, .sample_budget_percent = 0, .readiness_every = 2,
                              .trace_gpu = false};
  const auto meta = as_meta(asked);
  EXPECT_EQ(meta.size(), 7u);  // one key each, none shared
  EXPECT_EQ(meta.at(meta_key::kOpWindowStart), "20");
  EXPECT_EQ(meta.at(meta_key::kOpEvery), "3");
  EXPECT_EQ(meta.at(meta_key::kRangeSampleEvery), "7");
  EXPECT_EQ(meta.at(meta_key::kRangeSampleBudget), "0");
  EXPECT_EQ(meta.at(meta_key::kReadinessEvery), "2");
  EXPECT_EQ(meta.at(meta_key::kTraceGpu), "0");

  CaptureSettings read;  // the defaults, then what the session says
  EXPECT_TRUE(read.read_meta(meta));
  EXPECT_EQ(read, asked);
  EXPECT_NE(CaptureSettings{}, asked);
}

TEST(CaptureSettings, WhatAnOlderSessionDoesNotHoldStaysAsItWas) {
  // Sessions before 2026-11-28 hold the range samples' settings but no op window.
  std::map<std::string, std::string> meta{{meta_key::kRangeSampleEvery, "4"},
                                          {meta_key::kRangeSampleBudget, "5"},
                                          {meta_key::kPid, "1234"}};
  CaptureSettings shown{.window_start = 100, .every_n_steps = 9};
  EXPECT_TRUE(shown.read_meta(meta));
  EXPECT_EQ(shown.gradient_every, 4);
  EXPECT_EQ(shown.window_start, 100);
  EXPECT_EQ(shown.every_n_steps, 9);
  EXPECT_EQ(shown.readiness_every, CaptureSettings{}.readiness_every);
  CaptureSettings untraced{.trace_gpu = false};  // no trace_gpu before it was kept: the panel's stays
  EXPECT_TRUE(untraced.read_meta(meta));
  EXPECT_FALSE(untraced.trace_gpu);

  // None at all (a comparison, a session no profiler wrote), or unreadable: nothing read.
  CaptureSettings untouched{.gradient_every = 3};
  EXPECT_FALSE(untouched.read_meta({{meta_key::kPid, "1"}, {meta_key::kRangeSampleEvery, "ten"}}));
  EXPECT_EQ(untouched, (CaptureSettings{.gradient_every = 3}));
}

// The flags of `profile` and `run`, the Python keywords and their checks come from
// fields(): each count with its own option, in the order the options are declared.
TEST(CaptureSettings, EachCountCarriesItsOwnOptionAndChecksItsBound) {
  CaptureSettings s{.window_start = 2, .window_steps = 3, .every_n_steps = 4,
                    .gradient_every = 5, .sample_budget_percent = 6, .readiness_every = 7};
  const auto fields = s.fields();
  ASSERT_EQ(fields.size(), kCaptureOptions.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    EXPECT_STREQ(fields[i].option->key, kCaptureOptions[i].key);
    EXPECT_EQ(*fields[i].value, static_cast<int64_t>(i) + 2) << fields[i].option->key;
  }
  EXPECT_EQ(*CaptureSettings{}.fields()[2].value, kEveryOption.default_value);
  EXPECT_EQ(s.error(), std::nullopt);

  *fields[2].value = 0;  // through the field: --every 0
  EXPECT_EQ(s.every_n_steps, 0);
  EXPECT_EQ(s.error(), std::optional<std::string>("--every must be >= 1"));
  s.every_n_steps = 1;
  s.gradient_every = -1;
  EXPECT_EQ(s.error(), std::optional<std::string>("--grad-every must be >= 0"));
}

}  // namespace
}  // namespace ampscope::profiler
