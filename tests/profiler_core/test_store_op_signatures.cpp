// Ops are stored as signatures (name, phase, category, module, dtypes, shapes: once
// each) and calls referring to them (profiler/store/op_signatures.h). What a user
// relies on: every op reads back exactly as recorded, whichever of its fields it
// shares with others; a session holds each signature once however many steps
// repeat it; sessions written before (format 1, one row of text per op) still open.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "profiler/store/op_signatures.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_writer.h"
#include "profiler/store/sqlite_util.h"
#include "tests/profiler_core/session_fixture.h"
#include "tests/support/test_support.h"

namespace ampscope::profiler {
namespace {

using store_detail::OpSignatureIds;
using test::Fixture;
using test::make_fixture;
using test::ScratchDir;

OpRecord linear_op() {
  OpRecord op;
  op.name = "aten::linear";
  op.phase = Phase::kForward;
  op.category = OpCategory::kDemoted;
  op.module = "layers.0";
  op.input_dtypes = {"float", "float"};
  op.input_shapes = {{16, 32}, {32, 32}};
  op.output_dtypes = {"c10::BFloat16"};
  return op;
}

// Each way two ops can differ in what they are or ran on, beside the one they differ from.
std::vector<OpRecord> one_field_apart() {
  std::vector<OpRecord> out;
  auto with = [&](auto change) {
    OpRecord op = linear_op();
    change(op);
    out.push_back(op);
  };
  with([](OpRecord& op) { op.name = "aten::matmul"; });
  with([](OpRecord& op) { op.phase = Phase::kBackward; });
  with([](OpRecord& op) { op.category = OpCategory::kKeptFp32; });
  with([](OpRecord& op) { op.module = "layers.1"; });
  with([](OpRecord& op) { op.input_dtypes = {"float", "c10::BFloat16"}; });
  with([](OpRecord& op) { op.input_shapes = {{16, 32}, {32, 33}}; });
  with([](OpRecord& op) { op.input_shapes = {{16, 32, 32}}; });        // same dims, other tensors
  with([](OpRecord& op) { op.input_shapes = {{16}, {32, 32, 32}}; });  // same dims, other split
  with([](OpRecord& op) { op.output_dtypes = {"float"}; });
  with([](OpRecord& op) { op.output_dtypes = {}; });
  with([](OpRecord& op) {  // a dtype moved from the inputs to the outputs
    op.input_dtypes = {"float"};
    op.output_dtypes = {"float", "c10::BFloat16"};
  });
  return out;
}

TEST(OpSignatureIds, OpsThatDifferOnlyInTheirCallShareAnIdAndAnyOtherFieldMakesANewOne) {
  OpSignatureIds ids;
  const auto first = ids.find_or_add(linear_op());
  EXPECT_TRUE(first.is_new);
  OpRecord again = linear_op();  // another call: its own id, step, times, parent, thread
  again.id = 99;
  again.step = 7;
  again.start_ns = 5;
  again.end_ns = 9;
  again.parent_id = 3;
  again.thread_id = 2;
  again.cast_bytes = 64;
  EXPECT_EQ(ids.find_or_add(again).id, first.id);
  EXPECT_FALSE(ids.find_or_add(again).is_new);

  std::vector<int64_t> seen{first.id};
  for (const OpRecord& op : one_field_apart()) {
    const auto found = ids.find_or_add(op);
    EXPECT_TRUE(found.is_new) << op.name << " " << op.module;
    for (const int64_t id : seen) EXPECT_NE(found.id, id);
    seen.push_back(found.id);
    EXPECT_EQ(ids.find_or_add(op).id, found.id);
  }
  EXPECT_EQ(ids.size(), seen.size());
}

TEST(OpSignatureIds, AfterClearEverySignatureIsNewUnderAnIdNeverGivenBefore) {
  OpSignatureIds ids;
  const int64_t before = ids.find_or_add(linear_op()).id;
  ids.clear();
  EXPECT_EQ(ids.size(), 0u);
  const auto after = ids.find_or_add(linear_op());
  EXPECT_TRUE(after.is_new);  // its row may have gone with a rolled-back transaction
  EXPECT_GT(after.id, before);
}

// SQL on the file through the store's own SQLite wrappers (they throw StoreError).
int64_t count(const std::string& path, const char* query) {
  const store_detail::Db db(path, SQLITE_OPEN_READONLY);
  store_detail::Stmt s(db, query, "counting");
  return s.step() ? s.i64(0) : -1;
}

void sql(const std::string& path, const char* statements) {
  store_detail::Db(path, SQLITE_OPEN_READWRITE).exec(statements, "changing the file");
}

void expect_same_ops(const std::vector<OpRecord>& read, const std::vector<OpRecord>& written) {
  ASSERT_EQ(read.size(), written.size());
  for (size_t i = 0; i < read.size(); ++i) {
    const OpRecord& r = read[i];
    const OpRecord& w = written[i];
    EXPECT_EQ(r.id, w.id);
    EXPECT_EQ(r.parent_id, w.parent_id);
    EXPECT_EQ(r.step, w.step);
    EXPECT_EQ(r.name, w.name);
    EXPECT_EQ(r.phase, w.phase);
    EXPECT_EQ(r.category, w.category);
    EXPECT_EQ(r.module, w.module);
    EXPECT_EQ(r.sequence_nr, w.sequence_nr);
    EXPECT_EQ(r.forward_op_id, w.forward_op_id);
    EXPECT_EQ(r.depth, w.depth);
    EXPECT_EQ(r.autograd_node, w.autograd_node);
    EXPECT_EQ(r.thread_id, w.thread_id);
    EXPECT_EQ(r.start_ns, w.start_ns);
    EXPECT_EQ(r.end_ns, w.end_ns);
    EXPECT_EQ(r.input_dtypes, w.input_dtypes);
    EXPECT_EQ(r.input_shapes, w.input_shapes);
    EXPECT_EQ(r.output_dtypes, w.output_dtypes);
    EXPECT_EQ(r.cast_bytes, w.cast_bytes);
  }
}

// 50 steps of the fixture's ops and of ops one field apart from each other: every
// op reads back as written, in small batches and in a large one, and the file holds
// each distinct signature once.
TEST(StoreOpSignatures, RepeatedStepsStoreEachSignatureOnceAndEveryOpReadsBackAsWritten) {
  ScratchDir dir;
  const std::string path = dir / "s.ampscope";
  const Fixture f = make_fixture();
  std::vector<OpRecord> per_step = f.ops;
  for (OpRecord op : one_field_apart()) per_step.push_back(op);
  per_step.push_back(linear_op());
  constexpr int kSteps = 50;
  std::vector<OpRecord> written, batch;
  {
    auto w = SessionWriter::create(path, f.meta);
    uint64_t next_id = 1;
    int64_t t = test::kT0;
    for (int s = 1; s <= kSteps; ++s) {
      std::vector<OpRecord> ops = per_step;
      for (OpRecord& op : ops) {
        op.id = next_id++;
        op.step = s;
        op.start_ns = t;
        op.end_ns = t += 100;
        op.cast_bytes = s;  // per call, not per signature
      }
      written.insert(written.end(), ops.begin(), ops.end());
      // The first half a batch a step; the second half in one batch of hundreds of ops,
      // which the writer stores many rows to a statement, and the rest one by one.
      if (s <= kSteps / 2) {
        w->append_ops(std::move(ops));
      } else {
        batch.insert(batch.end(), ops.begin(), ops.end());
      }
    }
    ASSERT_GT(batch.size(), 100u);
    ASSERT_NE(batch.size() % 32, 0u);
    w->append_ops(std::move(batch));
    w->close();
    ASSERT_EQ(w->last_error(), "");
  }
  const SessionReader reader = SessionReader::open(path);
  expect_same_ops(reader.ops(), written);
  EXPECT_EQ(reader.op_count(), static_cast<int64_t>(written.size()));
  std::vector<int64_t> steps;
  for (int s = 1; s <= kSteps; ++s) steps.push_back(s);
  EXPECT_EQ(reader.op_steps(), steps);
  EXPECT_EQ(count(path, "SELECT count(*) FROM op_calls"), static_cast<int64_t>(written.size()));
  // Once each: as many rows as distinct signatures among the ops read back, and at
  // least the variants and their original (all distinct), whatever the fixture repeats.
  const int64_t distinct =
      count(path,
            "SELECT count(*) FROM (SELECT DISTINCT name, phase, category, module, input_dtypes, "
            "input_shapes, output_dtypes FROM ops)");
  EXPECT_GE(distinct, static_cast<int64_t>(one_field_apart().size() + 1));
  EXPECT_EQ(count(path, "SELECT count(*) FROM op_signatures"), distinct);
}

// A damaged file whose op_signatures lost a row: the calls of that signature are
// left out, as the view `ops` (and SQL on it) leaves them out, and nothing throws.
TEST(StoreOpSignatures, CallsWhoseSignatureIsMissingAreLeftOutAsTheViewLeavesThemOut) {
  ScratchDir dir;
  const std::string path = dir / "damaged.ampscope";
  const Fixture f = make_fixture();
  test::write_fixture_file(path, f);
  sql(path, "DELETE FROM op_signatures WHERE id = (SELECT signature_id FROM op_calls ORDER BY id LIMIT 1)");
  const int64_t through_view = count(path, "SELECT count(*) FROM ops");
  ASSERT_LT(through_view, static_cast<int64_t>(f.ops.size()));
  std::vector<OpRecord> read;
  ASSERT_NO_THROW(read = SessionReader::open(path).ops());
  EXPECT_EQ(static_cast<int64_t>(read.size()), through_view);
  for (const OpRecord& op : read) EXPECT_NE(op.id, f.ops.front().id);
}

// A session written before format 2 has a table `ops` with the text of every op:
// made here from a format-2 file by the SQL that format 1's writer would have left.
TEST(StoreOpSignatures, AFormatOneSessionWithOpsAsATableReadsTheSameOps) {
  ScratchDir dir;
  const std::string path = dir / "old.ampscope";
  const Fixture f = make_fixture();
  test::write_fixture_file(path, f);
  const std::vector<OpRecord> before = SessionReader::open(path).ops();
  const std::vector<int64_t> steps_before = SessionReader::open(path).op_steps();
  ASSERT_EQ(before.size(), f.ops.size());
  sql(path,
      "CREATE TABLE ops_v1 AS SELECT * FROM ops; DROP VIEW ops; DROP TABLE op_calls; DROP TABLE "
      "op_signatures;"
      "ALTER TABLE ops_v1 RENAME TO ops; CREATE INDEX ops_by_step ON ops(step); PRAGMA "
      "user_version = 1;");
  ASSERT_EQ(count(path, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='ops'"), 1);
  const SessionReader old = SessionReader::open(path);
  EXPECT_EQ(old.format_version(), 1);
  expect_same_ops(old.ops(), before);
  EXPECT_EQ(old.op_count(), static_cast<int64_t>(f.ops.size()));
  EXPECT_EQ(old.op_steps(), steps_before);
  EXPECT_FALSE(steps_before.empty());
}

}  // namespace
}  // namespace ampscope::profiler
