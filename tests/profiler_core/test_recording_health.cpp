// What a recording lost, in one line: every count and error is named, nothing
// is said when nothing was lost, and a session's meta gives the same line. And the
// one way ops are shed: the op sampling rule's recorded fall-backs (issue 32).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "profiler/process_identity.h"
#include "profiler/recording_health.h"
#include "profiler/script_facts.h"
#include "profiler/session_meta_keys.h"

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
  // The run ended but the writer's closing writes failed (a full disk): its counts are
  // missing, and the line says so rather than nothing.
  const RecordingHealth uncounted = recording_health_from_meta(
      {{"final_state", "finished"}, {meta_key::kStoreOutcome, meta_key::kStoreOutcomeOpen}});
  EXPECT_TRUE(uncounted.lost_anything());
  EXPECT_NE(describe(uncounted).find("could not store what it lost"), std::string::npos) << describe(uncounted);
  // Its error, when it reached the file, says more; a complete close and a session from
  // before the key say nothing; a run still going is "not closed", not uncounted.
  EXPECT_EQ(describe(recording_health_from_meta({{"final_state", "finished"},
                                                 {meta_key::kStoreOutcome, meta_key::kStoreOutcomeOpen},
                                                 {meta_key::kStoreLastError, "database or disk is full"}}))
                .find("could not store what it lost"),
            std::string::npos);
  EXPECT_EQ(describe(recording_health_from_meta(
                {{"final_state", "finished"}, {meta_key::kStoreOutcome, meta_key::kStoreOutcomeComplete}})),
            "");
  EXPECT_EQ(describe(recording_health_from_meta({{"final_state", "finished"}})), "");
  const RecordingHealth running = recording_health_from_meta({{meta_key::kStoreOutcome, meta_key::kStoreOutcomeOpen}});
  EXPECT_FALSE(running.store_counts_missing);
  EXPECT_NE(describe(running).find("not closed"), std::string::npos);
  // A count that is not a number is not a loss (and no crash).
  EXPECT_EQ(recording_health_from_meta({{"final_state", "finished"}, {"store_dropped_batches", "x"}})
                .store_dropped_batches,
            0u);
}

// A session is not closed while its run goes on: where its writer runs on this host (here,
// this process), nothing is lost, and a script's session says it runs. A writer that is gone
// (killed), or on another host (it cannot be checked), leaves it "not closed".
TEST(RecordingHealth, ASessionWhoseWriterRunsIsStillRecordingNotLost) {
  const std::string host = current_host_name();
  const std::string pid = std::to_string(current_process_id());
  const std::map<std::string, std::string> live{{meta_key::kPid, pid}, {meta_key::kHost, host}};
  const RecordingHealth recording = recording_health_from_meta(live);
  EXPECT_FALSE(recording.closed);
  EXPECT_TRUE(recording.still_recording);
  EXPECT_EQ(describe(recording), "");
  EXPECT_NE(in_progress(recording).find("the run is still going"), std::string::npos);
  auto script = live;
  script[meta_key::kKind] = meta_key::kKindPython;
  EXPECT_EQ(script_facts(script)->ended, "not yet: the script runs (pid " + pid + ")");

  const RecordingHealth elsewhere = recording_health_from_meta({{meta_key::kPid, pid}, {meta_key::kHost, host + "-b"}});
  EXPECT_FALSE(elsewhere.still_recording);
  EXPECT_NE(describe(elsewhere).find("not closed"), std::string::npos);
  EXPECT_EQ(in_progress(elsewhere), "");

  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_GT(gone, 0);
  ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);  // reaped: the pid runs nothing now
  auto killed = script;
  killed[meta_key::kPid] = std::to_string(gone);
  EXPECT_FALSE(recording_health_from_meta(killed).still_recording);
  EXPECT_NE(describe(recording_health_from_meta(killed)).find("not closed"), std::string::npos);
  EXPECT_EQ(script_facts(killed)->ended, "not closed: the script was killed, or is still running");
}

// How `ampscope run` ran the script (the GUI runs it again from it): read as written, and a
// damaged or partial value is no command rather than a wrong one.
TEST(ScriptCommand, IsReadAsWrittenAndADamagedOneIsNone) {
  std::map<std::string, std::string> meta{{meta_key::kKind, meta_key::kKindPython}};
  meta[meta_key::kScriptCommand] =
      R"({"python": "/v/bin/python", "working_directory": "/w", "module": true, "script": "pkg.train",)"
      R"( "arguments": ["--lr", "1e-3", "a b"]})";
  const auto facts = script_facts(meta);
  ASSERT_TRUE(facts && facts->command);
  EXPECT_EQ(facts->command->python, "/v/bin/python");
  EXPECT_EQ(facts->command->working_directory, "/w");
  EXPECT_TRUE(facts->command->module);
  EXPECT_EQ(facts->command->script, "pkg.train");
  EXPECT_EQ(facts->command->arguments, (std::vector<std::string>{"--lr", "1e-3", "a b"}));
  EXPECT_EQ(facts->command->world_size, 1) << "one process";
  EXPECT_FALSE(facts->command->on_several_nodes());
  // A rank of torchrun's: 4 processes, 2 on each of 2 machines.
  const std::string torchrun = R"({"python": "p", "working_directory": "/w", "module": false, "script": "t.py",)"
                               R"( "arguments": [], "ranks": {"world_size": 4, "local_world_size": 2, "rank": 3}})";
  meta[meta_key::kScriptCommand] = torchrun;
  const auto rank = script_facts(meta);
  ASSERT_TRUE(rank && rank->command);
  EXPECT_EQ(rank->command->world_size, 4);
  EXPECT_EQ(rank->command->local_world_size, 2);
  EXPECT_TRUE(rank->command->on_several_nodes());
  EXPECT_EQ(rank->command->rank, 3);
  const auto rows = fact_rows(*rank);
  ASSERT_EQ(rows.size(), fact_rows(*facts).size() + 1);
  EXPECT_EQ(rows[6].first, "device");
  EXPECT_EQ(rows[7].first, "ranks");
  EXPECT_EQ(rows[7].second,
            "rank 3 of 4 under torchrun (2 per machine); open the ranks' files together to compare them");
  for (const char* damaged : {"", "{", "[]", R"({"python": "p", "working_directory": "/w", "module": 1,)"
                                             R"( "script": "t.py", "arguments": []})",
                              R"({"python": "p", "working_directory": "/w", "module": false, "script": "",)"
                              R"( "arguments": []})",
                              R"({"python": "p", "working_directory": "/w", "module": false, "script": "t.py",)"
                              R"( "arguments": ["a", 2]})",
                              R"({"python": "p", "working_directory": "/w", "module": false, "script": "t.py",)"
                              R"( "arguments": [], "ranks": {"world_size": 3, "local_world_size": 2, "rank": 0}})",
                              R"({"python": "p", "working_directory": "/w", "module": false, "script": "t.py",)"
                              R"( "arguments": [], "ranks": {"world_size": 2, "local_world_size": 2}})",
                              R"({"python": "p", "working_directory": "/w", "module": false, "script": "t.py",)"
                              R"( "arguments": [], "ranks": {"world_size": 2, "local_world_size": 2, "rank": 2}})",
                              R"({"python": "p", "working_directory": "/w", "module": false, "script": "t.py",)"
                              R"( "arguments": [], "ranks": {"world_size": 2}})"}) {
    meta[meta_key::kScriptCommand] = damaged;
    EXPECT_FALSE(script_facts(meta)->command) << damaged;
  }
  meta.erase(meta_key::kScriptCommand);
  EXPECT_FALSE(script_facts(meta)->command) << "a session from before the key";
}

// FSDP's mixed precision, as the Python capture records it (meta_key::kSharding): the precision
// the model computes in without autocast, and how FSDP holds its parameters, on their own row.
TEST(ScriptFacts, FsdpsMixedPrecisionIsThePrecisionWhereNoAutocastIsAndItsPoliciesAreSaid) {
  std::map<std::string, std::string> meta{{meta_key::kKind, meta_key::kKindPython},
                                          {meta_key::kParameterDtypes, "float32:69194"}};
  const auto row = [](const ScriptFacts& f, const std::string& label) {
    for (const auto& [l, value] : fact_rows(f))
      if (l == label) return value;
    return std::string("(no row)");
  };
  ASSERT_TRUE(script_facts(meta));
  EXPECT_EQ(row(*script_facts(meta), "sharding"), "(no row)") << "no FSDP, no row";
  meta[meta_key::kSharding] =
      R"({"fsdp": [{"api": "fully_shard", "param_dtype": "bf16", "reduce_dtype": "fp32",)"
      R"( "output_dtype": null, "modules": 3}], "sharded_parameters": 69194})";
  auto f = script_facts(meta);
  EXPECT_EQ(f->fsdp_compute_precision(), "bf16");
  EXPECT_EQ(
      row(*f, "precision"),
      "bf16 compute on fp32 parameters: FSDP's mixed precision (param_dtype bf16), no autocast");
  EXPECT_EQ(row(*f, "sharding"),
            "FSDP (fully_shard) on 3 modules: param_dtype bf16, reduce_dtype fp32; the range "
            "samples read this rank's shard of each gradient");
  const auto rows = fact_rows(*f);
  EXPECT_EQ(rows[3].first, "precision");
  EXPECT_EQ(rows[4].first, "sharding") << "right after the precision it explains";
  // Under autocast too: autocast's precision first, FSDP's beside it.
  meta[meta_key::kPrecision] = "bf16";
  EXPECT_EQ(row(*script_facts(meta), "precision"),
            "bf16 autocast, under FSDP's mixed precision (param_dtype bf16)");
  meta[meta_key::kPrecision] = "fp32";
  // FSDP1 whose only cast is the gradients' reduction: the compute stays fp32.
  meta[meta_key::kSharding] =
      R"({"fsdp": [{"api": "FullyShardedDataParallel", "param_dtype": null,)"
      R"( "reduce_dtype": "bf16", "output_dtype": null, "modules": 1}], "sharded_parameters": 0})";
  f = script_facts(meta);
  EXPECT_EQ(f->fsdp_compute_precision(), "");
  EXPECT_EQ(row(*f, "precision"), "fp32 (no autocast region seen)");
  EXPECT_EQ(row(*f, "sharding"),
            "FSDP (FullyShardedDataParallel) on 1 module: param_dtype as the parameters, "
            "reduce_dtype bf16");
  // Policies that cast to different precisions: no one compute precision is claimed.
  meta[meta_key::kSharding] =
      R"({"fsdp": [{"api": "fully_shard", "param_dtype": "bf16", "modules": 2},)"
      R"( {"api": "fully_shard", "param_dtype": "fp16", "output_dtype": "fp32", "modules": 1}]})";
  f = script_facts(meta);
  EXPECT_EQ(f->fsdp_compute_precision(), "");
  EXPECT_EQ(row(*f, "precision"), "fp32 (no autocast region seen)");
  EXPECT_EQ(row(*f, "sharding"),
            "FSDP (fully_shard) on 2 modules: param_dtype bf16, reduce_dtype as param_dtype; "
            "FSDP (fully_shard) on 1 module: param_dtype fp16, reduce_dtype as param_dtype, "
            "output_dtype fp32");
  // Tensor parallel's DTensors without FSDP; a damaged value says nothing.
  meta[meta_key::kSharding] = R"({"fsdp": [], "sharded_parameters": 4096})";
  EXPECT_EQ(row(*script_facts(meta), "sharding"),
            "DTensor parameters: the range samples read this rank's shard of each gradient");
  for (const char* damaged :
       {"", "{", "[]", R"({"fsdp": 3})", R"({"fsdp": [{"param_dtype": "bf16"}]})"}) {
    meta[meta_key::kSharding] = damaged;
    EXPECT_EQ(row(*script_facts(meta), "sharding"), "(no row)") << damaged;
    EXPECT_EQ(row(*script_facts(meta), "precision"), "fp32 (no autocast region seen)") << damaged;
  }
}

TEST(OpSamplingRule, FallingBehindDoublesTheStrideFromThatStepAndShedsThatStep) {
  OpSamplingRule rule(/*window_start=*/1, /*window_steps=*/0, /*every_n_steps=*/1);
  for (int64_t step = 1; step <= 5; ++step) EXPECT_TRUE(rule.selects(step)) << step;
  EXPECT_TRUE(rule.fall_back(5, {128, 0}));
  EXPECT_TRUE(rule.selects(4));  // steps before the fall-back keep the user's stride
  for (int64_t step : {5, 6, 8, 10}) EXPECT_FALSE(rule.selects(step)) << step;
  for (int64_t step : {7, 9, 11}) EXPECT_TRUE(rule.selects(step)) << step;
  EXPECT_FALSE(rule.fall_back(8, {200, 0}));  // a step the rule does not select changes nothing
  EXPECT_TRUE(rule.fall_back(9, {130, 0}));
  for (int64_t step : {9, 10, 11, 12}) EXPECT_FALSE(rule.selects(step)) << step;
  EXPECT_TRUE(rule.selects(13));
  EXPECT_TRUE(rule.selects(7));
  EXPECT_EQ(rule.encode(), "5:2:128:0;9:4:130:0");
  EXPECT_EQ(OpSamplingRule::describe(rule.fallbacks()),
            "ops recorded every 2nd step from step 7 and every 4th from step 13: the capture fell behind the "
            "training (128 record batches waiting at step 5); steps, losses and loss scales are complete");
}

// Behind at 128 batches, drained at 32; op records not counted.
constexpr OpSamplingRule::Limits kBatchLimits{128, 32, 0, 0};

// The live rule at each selected step with the given backlog: what changed where.
std::vector<std::pair<int64_t, OpSamplingRule::Change>> drive(OpSamplingRule& rule, int64_t from, int64_t to,
                                                               uint64_t backlog) {
  std::vector<std::pair<int64_t, OpSamplingRule::Change>> changes;
  for (int64_t step = from; step <= to; ++step) {
    if (!rule.selects(step)) continue;
    if (const auto c = rule.adjust(step, {backlog, 0}, kBatchLimits); c != OpSamplingRule::Change::kNone)
      changes.emplace_back(step, c);
  }
  return changes;
}

// A worker that stays behind: the stride doubles at once, then only after a few
// selected steps at the new stride (it overshot to every 32nd step in six steps,
// doubling at each selected step while the queue had not yet had time to drain).
TEST(OpSamplingRule, WideningWaitsForTheWiderStrideToShow) {
  using Change = OpSamplingRule::Change;
  OpSamplingRule rule(1, 0, 1);
  EXPECT_EQ(drive(rule, 1, 10, 10), (decltype(drive(rule, 1, 1, 0)){}));  // a short queue changes nothing
  const auto changes = drive(rule, 11, 60, 200);
  // Step 11 shed, every 2nd step from 13; after four selected steps at it (13..19), 21 shed, every 4th from 25; ...
  ASSERT_GE(changes.size(), 2u);
  EXPECT_EQ(changes[0], std::make_pair(int64_t{11}, Change::kWidened));
  EXPECT_EQ(changes[1], std::make_pair(int64_t{21}, Change::kWidened));
  EXPECT_EQ(rule.fallbacks()[1].every, 4);
  EXPECT_LE(rule.current_every(), 8) << "50 steps behind must not widen the stride past 8";
  // A queue that shrinks after a fall-back is draining: no more widening.
  OpSamplingRule draining(1, 0, 1);
  uint64_t backlog = 200;
  for (int64_t step = 1; step <= 100; ++step)
    if (draining.selects(step)) draining.adjust(step, {backlog--, 0}, kBatchLimits);
  EXPECT_EQ(draining.current_every(), 2);
}

// Once the queue has drained and stayed short, the stride halves, back to the
// user's at most: a moment behind (a checkpoint, a busy machine) does not thin
// the rest of a long run's op records. The step where it narrows is recorded.
TEST(OpSamplingRule, CatchingUpNarrowsBackToTheUsersStride) {
  using Change = OpSamplingRule::Change;
  OpSamplingRule rule(1, 0, 3);
  for (int64_t step = 1; step <= 40; ++step)
    if (rule.selects(step)) rule.adjust(step, {200, 0}, kBatchLimits);
  const int64_t widest = rule.current_every();
  ASSERT_GE(widest, 12);
  const int64_t behind_until = rule.fallbacks().back().from_step;
  const auto changes = drive(rule, 41, 5000, 0);
  ASSERT_FALSE(changes.empty());
  for (const auto& [step, change] : changes) {
    EXPECT_EQ(change, Change::kNarrowed) << step;
    EXPECT_TRUE(rule.selects(step)) << "a narrowing step is recorded: " << step;
  }
  EXPECT_EQ(rule.current_every(), 3) << "back to the user's stride, never below it";
  // Each narrowing waited for nine selected steps at the stride before it.
  EXPECT_GE(changes.front().first, behind_until + 9 * widest);
  // A stored rule (decode) selects the same steps as the live one.
  const OpSamplingRule stored(1, 0, 3, *OpSamplingRule::decode(rule.encode()));
  for (int64_t step = 1; step <= 5000; ++step) ASSERT_EQ(stored.selects(step), rule.selects(step)) << step;
  const std::string said = OpSamplingRule::describe(rule.fallbacks());
  EXPECT_NE(said.find("and every 3rd from step " + std::to_string(changes.back().first)), std::string::npos) << said;
  EXPECT_NE(said.find("caught up as its queue drained"), std::string::npos) << said;
}

TEST(OpSamplingRule, KeepsTheWindowAndTheUsersStride) {
  OpSamplingRule rule(/*window_start=*/10, /*window_steps=*/20, /*every_n_steps=*/5);  // steps 10..29
  EXPECT_FALSE(rule.selects(5));
  EXPECT_TRUE(rule.selects(15));
  EXPECT_TRUE(rule.fall_back(15, {7, 0}));  // every 10th from 15: 25, 35 (outside the window)
  EXPECT_FALSE(rule.selects(20));
  EXPECT_TRUE(rule.selects(25));
  EXPECT_FALSE(rule.selects(35));
}

TEST(OpSamplingRule, StoredFormRoundTripsAndRejectsForeignText) {
  const auto decoded = OpSamplingRule::decode("5:2:128:0;9:4:130:2000000");
  ASSERT_TRUE(decoded.has_value());
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ((*decoded)[1].from_step, 9);
  EXPECT_EQ((*decoded)[1].every, 4);
  EXPECT_EQ((*decoded)[1].backlog, 130u);
  EXPECT_EQ((*decoded)[1].ops_waiting, 2000000u);
  EXPECT_TRUE(OpSamplingRule::decode("")->empty());
  for (const char* bad : {"x", "5:2", "5:0:1", "5:2:1 junk", "-1:2:3", "5:2:1:", "5:2:1:2:3", "5:2:1;2"})
    EXPECT_FALSE(OpSamplingRule::decode(bad).has_value()) << bad;
}

// A few batches of large steps hold a million op records (half a gigabyte) long
// before 128 batches wait: the op count alone makes the rule fall back, the line
// says how many records waited, and the rule narrows only when both have drained.
TEST(OpSamplingRule, OpRecordsWaitingFallBackOnTheirOwnAndAreSaid) {
  using Change = OpSamplingRule::Change;
  constexpr OpSamplingRule::Limits limits{128, 32, 1'000'000, 125'000};
  OpSamplingRule rule(1, 0, 1);
  EXPECT_EQ(rule.adjust(1, {10, 999'999}, limits), Change::kNone);
  EXPECT_EQ(rule.adjust(2, {10, 1'000'000}, limits), Change::kWidened);
  EXPECT_FALSE(rule.selects(2));
  EXPECT_EQ(rule.fallbacks().back().ops_waiting, 1'000'000u);
  EXPECT_EQ(OpSamplingRule::describe(rule.fallbacks()),
            "ops recorded every 2nd step from step 4: the capture fell behind the training (1000000 op records in "
            "10 batches waiting at step 2); steps, losses and loss scales are complete");
  // Few batches but still many records: not drained, the stride stays.
  for (int64_t step = 4; step <= 60; step += 2) EXPECT_NE(rule.adjust(step, {0, 200'000}, limits), Change::kNarrowed);
  EXPECT_EQ(rule.current_every(), 2);
  bool narrowed = false;
  for (int64_t step = 62; step <= 100 && !narrowed; step += 2)
    narrowed = rule.adjust(step, {0, 100'000}, limits) == Change::kNarrowed;
  EXPECT_TRUE(narrowed);
  EXPECT_EQ(rule.current_every(), 1);
  // A stored rule of either form selects the same steps as the live one.
  const OpSamplingRule stored(1, 0, 1, *OpSamplingRule::decode(rule.encode()));
  for (int64_t step = 1; step <= 120; ++step) EXPECT_EQ(stored.selects(step), rule.selects(step)) << step;
}

// Sessions before 2026-11-26 stored "step:every:batches": they read and say as they did.
TEST(OpSamplingRule, AnOlderSessionsRuleWithoutOpCountsIsSaidInBatches) {
  const auto decoded = OpSamplingRule::decode("5:2:128;9:4:130");
  ASSERT_TRUE(decoded.has_value());
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ((*decoded)[0].ops_waiting, 0u);
  EXPECT_EQ(OpSamplingRule::describe(*decoded),
            "ops recorded every 2nd step from step 7 and every 4th from step 13: the capture fell behind the "
            "training (128 record batches waiting at step 5); steps, losses and loss scales are complete");
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
