// The capture's settings as a session keeps them: what `profile`, `ampscope.capture()`
// and the GUI asked for, read back so the GUI's Start runs an opened session again as
// it was recorded (its run panel took the training settings but not these).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "profiler/capture_settings.h"

namespace ampscope::profiler {
namespace {

// ProfilerOptions' sampling fields (profiler/capture/profiler.h), without LibTorch.
struct OptionsLike {
  int64_t window_start = 0, window_steps = 0, every_n_steps = 0;
  int64_t gradient_every = 0, sample_budget_percent = 0, readiness_every = 0;
  std::string session_path = "kept";
};

std::map<std::string, std::string> as_meta(const CaptureSettings& s) {
  std::map<std::string, std::string> meta;
  for (const auto& [key, value] : s.meta_entries()) meta[key] = value;
  return meta;
}

TEST(CaptureSettings, EverySettingGoesIntoTheSessionAndComesBack) {
  const CaptureSettings asked{.window_start = 20, .window_steps = 50, .every_n_steps = 3,
                              .gradient_every = 7, .sample_budget_percent = 0, .readiness_every = 2};
  const auto meta = as_meta(asked);
  EXPECT_EQ(meta.size(), 6u);  // one key each, none shared
  EXPECT_EQ(meta.at(meta_key::kOpWindowStart), "20");
  EXPECT_EQ(meta.at(meta_key::kOpEvery), "3");
  EXPECT_EQ(meta.at(meta_key::kRangeSampleEvery), "7");
  EXPECT_EQ(meta.at(meta_key::kRangeSampleBudget), "0");
  EXPECT_EQ(meta.at(meta_key::kReadinessEvery), "2");

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

  // None at all (a comparison, a session no profiler wrote), or unreadable: nothing read.
  CaptureSettings untouched{.gradient_every = 3};
  EXPECT_FALSE(untouched.read_meta({{meta_key::kPid, "1"}, {meta_key::kRangeSampleEvery, "ten"}}));
  EXPECT_EQ(untouched, (CaptureSettings{.gradient_every = 3}));
}

TEST(CaptureSettings, ReachAndComeFromTheProfilersOptions) {
  const CaptureSettings asked{.window_start = 2, .window_steps = 3, .every_n_steps = 4,
                              .gradient_every = 5, .sample_budget_percent = 6, .readiness_every = 7};
  OptionsLike options;
  asked.apply_to(options);
  EXPECT_EQ(options.window_start, 2);
  EXPECT_EQ(options.window_steps, 3);
  EXPECT_EQ(options.every_n_steps, 4);
  EXPECT_EQ(options.gradient_every, 5);
  EXPECT_EQ(options.sample_budget_percent, 6);
  EXPECT_EQ(options.readiness_every, 7);
  EXPECT_EQ(options.session_path, "kept");
  EXPECT_EQ(CaptureSettings::of(options), asked);
}

}  // namespace
}  // namespace ampscope::profiler
