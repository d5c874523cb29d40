// What a recording lost, in one line: every count and error is named, nothing
// is said when nothing was lost, and a session's meta gives the same line. And the
// one way ops are shed: the op sampling rule's recorded fall-backs (issue 32).
#include <gtest/gtest.h>

#include "profiler/recording_health.h"
#include "profiler/store/session_meta_keys.h"

namespace ampscope::profiler {
namespace {

TEST(RecordingHealth, NothingLostSaysNothing) {
  EXPECT_EQ(describe(RecordingHealth{}), "");
  EXPECT_FALSE(RecordingHealth{}.lost_anything());
}

TEST(RecordingHealth, EveryLossIsNamedOnOneLine) {
  RecordingHealth h;
  h.store_error = "database or disk is full";
  h.store_dropped_batches = 12;
  h.profiler_dropped_batches = 1;
  h.cupti_dropped_records = 40;
  h.dropped_events = 3;
  const std::string line = describe(h);
  EXPECT_TRUE(h.lost_anything());
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  for (const char* piece : {"the session writer failed (database or disk is full) and did not store 12 batches",
                            "dropped 1 batch of records", "CUPTI dropped 40 GPU records", "missed 3 run events"})
    EXPECT_NE(line.find(piece), std::string::npos) << piece << " in " << line;
}

TEST(RecordingHealth, FromASessionsMeta) {
  const RecordingHealth closed = recording_health_from_meta(
      {{"final_state", "finished"}, {"profiler_dropped_batches", "0"}, {"store_dropped_batches", "0"}});
  EXPECT_EQ(describe(closed), "");
  const RecordingHealth lossy = recording_health_from_meta({{"final_state", "finished"},
                                                            {"store_dropped_batches", "5"},
                                                            {meta_key::kStoreLastError, "disk I/O error"}});
  EXPECT_EQ(lossy.store_dropped_batches, 5u);
  EXPECT_EQ(lossy.store_error, "disk I/O error");
  // No final state: the run never closed its session (killed, or still going).
  const RecordingHealth killed = recording_health_from_meta({{"precision", "bf16"}});
  EXPECT_FALSE(killed.closed);
  EXPECT_NE(describe(killed).find("not closed"), std::string::npos);
  // A count that is not a number is not a loss (and no crash).
  EXPECT_EQ(recording_health_from_meta({{"final_state", "finished"}, {"store_dropped_batches", "x"}})
                .store_dropped_batches,
            0u);
}

TEST(OpSamplingRule, FallingBehindDoublesTheStrideFromThatStepAndShedsThatStep) {
  OpSamplingRule rule(/*window_start=*/1, /*window_steps=*/0, /*every_n_steps=*/1);
  for (int64_t step = 1; step <= 5; ++step) EXPECT_TRUE(rule.selects(step)) << step;
  EXPECT_TRUE(rule.fall_back(5, 128));
  EXPECT_TRUE(rule.selects(4));  // steps before the fall-back keep the user's stride
  for (int64_t step : {5, 6, 8, 10}) EXPECT_FALSE(rule.selects(step)) << step;
  for (int64_t step : {7, 9, 11}) EXPECT_TRUE(rule.selects(step)) << step;
  EXPECT_FALSE(rule.fall_back(8, 200));  // a step the rule does not select changes nothing
  EXPECT_TRUE(rule.fall_back(9, 130));
  for (int64_t step : {9, 10, 11, 12}) EXPECT_FALSE(rule.selects(step)) << step;
  EXPECT_TRUE(rule.selects(13));
  EXPECT_TRUE(rule.selects(7));
  EXPECT_EQ(rule.encode(), "5:2:128;9:4:130");
  EXPECT_EQ(OpSamplingRule::describe(rule.fallbacks()),
            "ops recorded every 2nd step from step 7 and every 4th from step 13: the capture fell behind the "
            "training (128 record batches waiting at step 5); steps, losses and loss scales are complete");
}

TEST(OpSamplingRule, KeepsTheWindowAndTheUsersStride) {
  OpSamplingRule rule(/*window_start=*/10, /*window_steps=*/20, /*every_n_steps=*/5);  // steps 10..29
  EXPECT_FALSE(rule.selects(5));
  EXPECT_TRUE(rule.selects(15));
  EXPECT_TRUE(rule.fall_back(15, 7));  // every 10th from 15: 25, 35 (outside the window)
  EXPECT_FALSE(rule.selects(20));
  EXPECT_TRUE(rule.selects(25));
  EXPECT_FALSE(rule.selects(35));
}

TEST(OpSamplingRule, StoredFormRoundTripsAndRejectsForeignText) {
  const auto decoded = OpSamplingRule::decode("5:2:128;9:4:130");
  ASSERT_TRUE(decoded.has_value());
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ((*decoded)[1].from_step, 9);
  EXPECT_EQ((*decoded)[1].every, 4);
  EXPECT_EQ((*decoded)[1].backlog, 130u);
  EXPECT_TRUE(OpSamplingRule::decode("")->empty());
  for (const char* bad : {"x", "5:2", "5:0:1", "5:2:1 junk", "-1:2:3"})
    EXPECT_FALSE(OpSamplingRule::decode(bad).has_value()) << bad;
}

TEST(RecordingHealth, ShedOpsAreSaidFromTheSessionsMeta) {
  const RecordingHealth h = recording_health_from_meta(
      {{"final_state", "finished"}, {meta_key::kOpSamplingFallbacks, "300:2:128"}});
  EXPECT_TRUE(h.lost_anything());
  EXPECT_NE(describe(h).find("ops recorded every 2nd step from step 302"), std::string::npos) << describe(h);
  // A damaged value is not a fall-back (and no crash).
  EXPECT_EQ(describe(recording_health_from_meta({{"final_state", "finished"}, {meta_key::kOpSamplingFallbacks, "?"}})),
            "");
}

}  // namespace
}  // namespace ampscope::profiler
