#include "engine/data/csv_table.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>
#include <string_view>

#include "engine/data/file_bytes.h"
#include "engine/data/load_stop.h"
#include "engine/data/tensor_source.h"
#include "engine/errors.h"

namespace ampscope::engine::data {
namespace {

constexpr std::string_view kWhat = "CSV file";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t begin = 0;
  while (true) {
    const size_t comma = line.find(',', begin);
    if (comma == std::string_view::npos) {
      fields.push_back(trim(line.substr(begin)));
      return fields;
    }
    fields.push_back(trim(line.substr(begin, comma - begin)));
    begin = comma + 1;
  }
}

// The whole field must be a number; from_chars rejects a leading '+', so skip it.
std::optional<double> parse_number(std::string_view field) {
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  if (field.empty()) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return value;
}

std::string quoted_field(std::string_view field) {
  if (field.empty()) return "an empty field";
  constexpr size_t kMaxShown = 40;
  return fmt::format("'{}{}'", field.substr(0, kMaxShown), field.size() > kMaxShown ? "..." : "");
}

}  // namespace

CsvTable parse_csv(const std::string& text, const std::string& path) {
  CsvTable table;
  int64_t first_data_line = 0;
  int64_t line_number = 0;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (line_number % 65536 == 0) throw_if_load_stopped();  // a stop need not wait for a huge file's parse
    if (trim(line).empty()) continue;

    std::vector<std::string_view> fields = split_fields(line);
    const auto width = static_cast<int64_t>(fields.size());
    if (table.columns == 0) {
      table.columns = width;
      if (width < 2) {
        throw DataError(
            fmt::format("{} '{}': line {} has {} column; need at least 2 (features and a target), "
                        "separated by ','",
                        kWhat, path, line_number, width));
      }
      bool numeric = true;
      for (std::string_view f : fields) numeric = numeric && parse_number(f).has_value();
      if (!numeric && table.header.empty()) {
        for (std::string_view f : fields) table.header.emplace_back(f);
        continue;
      }
    }
    if (width != table.columns) {
      throw DataError(fmt::format("{} '{}': line {} has {} fields, expected {} (as in line {})",
                                  kWhat, path, line_number, width, table.columns,
                                  first_data_line != 0 ? first_data_line : line_number - 1));
    }
    if (first_data_line == 0) first_data_line = line_number;
    for (int64_t c = 0; c < width; ++c) {
      const std::optional<double> value = parse_number(fields[c]);
      if (!value) {
        throw DataError(fmt::format("{} '{}': line {}, column {}: {} is not a number", kWhat, path,
                                    line_number, c + 1, quoted_field(fields[c])));
      }
      if (!std::isfinite(*value)) {
        throw DataError(fmt::format("{} '{}': line {}, column {}: {} is not a finite number", kWhat,
                                    path, line_number, c + 1, quoted_field(fields[c])));
      }
      table.values.push_back(*value);
    }
    ++table.rows;
  }
  if (line_number == 0 || table.columns == 0) {
    throw DataError(fmt::format("{} '{}': empty file", kWhat, path));
  }
  if (table.rows == 0) {
    throw DataError(fmt::format("{} '{}': a header but no data rows", kWhat, path));
  }
  return table;
}

std::unique_ptr<DataSource> make_csv_source(const std::string& path, int64_t target_column) {
  if (target_column < -1) {
    throw ConfigError(
        fmt::format("CSV target column must be a 0-based column index or -1 for the last, got {}",
                    target_column));
  }
  const CsvTable table = parse_csv(read_file_bytes(path, kWhat), path);
  if (target_column >= table.columns) {
    throw DataError(
        fmt::format("{} '{}': target column {} (0-based) is out of range; the file has {} columns",
                    kWhat, path, target_column, table.columns));
  }
  const int64_t target = target_column == -1 ? table.columns - 1 : target_column;
  const int64_t features = table.columns - 1;

  at::Tensor all = at::from_blob(const_cast<double*>(table.values.data()),
                                 {table.rows, table.columns}, at::kDouble)
                       .clone();
  at::Tensor y = all.select(1, target).contiguous();
  std::vector<int64_t> keep;
  for (int64_t c = 0; c < table.columns; ++c) {
    if (c != target) keep.push_back(c);
  }
  at::Tensor x = all.index_select(1, at::tensor(keep, at::kLong));
  // Statistics in double, so that large raw values do not lose precision before scaling.
  const at::Tensor mean = x.mean({0}, /*keepdim=*/true);
  at::Tensor stddev = x.std({0}, /*unbiased=*/false, /*keepdim=*/true);
  stddev = at::where(stddev > 0, stddev, at::ones_like(stddev));
  x = ((x - mean) / stddev).to(at::kFloat);

  bool integral = true;
  double max_label = 0;
  std::set<double> distinct;
  const double* yp = y.data_ptr<double>();
  for (int64_t i = 0; i < table.rows && integral; ++i) {
    const double v = yp[i];
    integral = v >= 0 && v < kCsvMaxClasses && v == std::floor(v);
    distinct.insert(v);
    max_label = std::max(max_label, v);
  }
  integral = integral && static_cast<int64_t>(distinct.size()) <= kCsvMaxClasses;

  const std::string target_name = table.header.empty() ? fmt::format("column {}", target + 1)
                                                       : fmt::format("'{}'", table.header[target]);
  SampleSpec spec;
  spec.input_shape = {features};
  std::string task;
  at::Tensor targets;
  if (integral) {
    spec.task = TaskKind::kClassification;
    spec.num_classes = static_cast<int64_t>(max_label) + 1;
    targets = y.to(at::kLong);
    task = fmt::format("{} classes", spec.num_classes);
  } else {
    spec.task = TaskKind::kRegression;
    spec.target_dim = 1;
    targets = y.to(at::kFloat).unsqueeze(1);
    task = "regression";
  }
  return std::make_unique<TensorDataSource>(
      spec,
      fmt::format("CSV {}: {} rows, {} standardized features, target {}: {}", file_name_of(path),
                  table.rows, features, target_name, task),
      x.contiguous(), targets);
}

}  // namespace ampscope::engine::data
