#pragma once
// A numeric CSV table: one sample per row, one column is the target.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/data_source.h"

namespace ampscope::engine::data {

// Classification when every target value is an integer in [0, kCsvMaxClasses) (then
// num_classes = max + 1); otherwise regression with target_dim 1.
inline constexpr int64_t kCsvMaxClasses = 1000;

// The parsed table before it becomes a data source; rows are samples.
struct CsvTable {
  std::vector<std::string> header;  // column names; empty when the file has no header row
  int64_t rows = 0;
  int64_t columns = 0;
  std::vector<double> values;  // row-major, rows * columns
};

// Parses comma-separated numbers. The first row is a header when any of its fields is
// not a number. Blank lines are skipped; fields may be surrounded by spaces or double
// quotes. Throws DataError naming the file, line and column (both 1-based) on ragged
// rows, non-numeric or non-finite fields, an empty file, fewer than 2 columns or no rows.
CsvTable parse_csv(const std::string& text, const std::string& path);

// target_column: 0-based, -1 for the last. Features are standardized per column
// (zero mean, unit variance; constant columns are only centred). Input [B, F] float32;
// target [B] int64 (classification) or [B, 1] float32 (regression).
// Throws DataError (file problems, target column out of range) or ConfigError
// (target_column < -1).
std::unique_ptr<DataSource> make_csv_source(const std::string& path, int64_t target_column);

}  // namespace ampscope::engine::data
