// What a recording lost, in one line: every count and error is named, nothing
// is said when nothing was lost, and a session's meta gives the same line.
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

}  // namespace
}  // namespace ampscope::profiler
