// The CREATE TABLE text and row_codec.h's column lists name the same columns in
// the same order, for every table of a session and of a comparison: the writer
// and the reader build their SQL from the lists, so a column added to the schema
// alone (or to a list alone) would go unwritten, unread or misplaced. Also: the
// codec's SQL helpers, and files from before an added column.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "profiler/store/comparison_store.h"
#include "profiler/store/row_codec.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_writer.h"
#include "tests/support/test_support.h"

namespace ampscope::profiler {
namespace {

using store_detail::TableLayout;

std::vector<std::string> tables_in(const store_detail::Db& db) {
  store_detail::Stmt s(db, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name", "listing tables");
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

// Every table of the file is in `layouts` with exactly its columns, and every
// layout's table is in the file.
void expect_layouts_match(const std::string& path, const std::vector<TableLayout>& layouts) {
  const store_detail::Db db(path, SQLITE_OPEN_READONLY);
  std::set<std::string> listed;
  for (const TableLayout& layout : layouts) {
    listed.insert(std::string(layout.table));
    const std::vector<std::string> expected(layout.columns.begin(), layout.columns.end());
    EXPECT_EQ(store_detail::table_columns(db, layout.table), expected)
        << "table " << layout.table << ": the CREATE TABLE text and row_codec.h's list differ";
  }
  for (const std::string& table : tables_in(db))
    EXPECT_TRUE(listed.count(table)) << "table " << table << " has no layout in row_codec.h";
}

std::vector<TableLayout> session_and_comparison_layouts() {
  std::vector<TableLayout> all = store_detail::session_table_layouts();
  const auto& comparison = store_detail::comparison_table_layouts();
  all.insert(all.end(), comparison.begin(), comparison.end());
  return all;
}

TEST(StoreColumns, EverySessionTableHasTheCodecsColumnsInOrder) {
  test::ScratchDir dir;
  const std::string path = dir / "s.ampscope";
  SessionWriter::create(path, SessionMeta{})->close();
  expect_layouts_match(path, store_detail::session_table_layouts());
}

TEST(StoreColumns, EveryComparisonTableHasTheCodecsColumnsInOrder) {
  test::ScratchDir dir;
  const std::string path = dir / "c.ampscope";
  Comparison comparison;
  ComparisonWriter::create(path, comparison, false);
  expect_layouts_match(path, session_and_comparison_layouts());
}

TEST(StoreColumns, InsertAndColumnListsComeFromTheLists) {
  constexpr auto columns = std::to_array<std::string_view>({"a", "b", "c"});
  EXPECT_EQ(store_detail::column_list(columns), "a,b,c");
  EXPECT_EQ(store_detail::column_list(columns, "k"), "k.a,k.b,k.c");
  EXPECT_EQ(store_detail::insert_sql("INSERT OR REPLACE", "t", columns), "INSERT OR REPLACE INTO t(a,b,c) VALUES(?1,?2,?3)");
  EXPECT_EQ(store_detail::kernel_select_columns().substr(0, 49), "k.kind,k.correlation_id,k.op_id,k.step,n.name,k.d");
}

// A file whose table predates an added column reads that column's stand-in; a
// column missing that was never added stays an error.
TEST(StoreColumns, AnAddedColumnAFileLacksReadsItsStandIn) {
  test::ScratchDir dir;
  const std::string path = dir / "old.sqlite";
  store_detail::Db db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  db.exec("CREATE TABLE steps(step INTEGER, loss REAL)", "creating");
  constexpr auto columns = std::to_array<std::string_view>({"step", "loss", "eval_loss"});
  EXPECT_EQ(store_detail::select_columns(db, "steps", columns, store_detail::kStepAddedColumns), "step,loss,NULL");
  constexpr auto unknown = std::to_array<std::string_view>({"step", "loss", "grad_norm"});
  EXPECT_EQ(store_detail::select_columns(db, "steps", unknown, store_detail::kStepAddedColumns), "step,loss,grad_norm");
}

}  // namespace
}  // namespace ampscope::profiler
