// CSV tables: header detection, target column, classification vs regression,
// standardization, and errors that name the line and column.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <string>

#include "engine/config.h"
#include "engine/data/data_source.h"
#include "engine/errors.h"
#include "tests/support/test_support.h"

namespace ampscope::engine {
namespace {

using test::ScratchDir;

std::unique_ptr<DataSource> load_csv(const ScratchDir& dir, const std::string& text,
                                     int64_t target_column = -1) {
  test::write_file(dir / "table.csv", text);
  DataConfig data;
  data.kind = DataKind::kCSV;
  data.path = (dir / "table.csv").string();
  data.csv_target_column = target_column;
  return make_data_source(data, ModelConfig{}, 0);
}

Batch draw(DataSource& source, int64_t batch) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(0);
  return source.sample_batch(batch, gen);
}

std::string data_error(const ScratchDir& dir, const std::string& text, int64_t target = -1) {
  try {
    load_csv(dir, text, target);
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_NE(what.find("table.csv"), std::string::npos) << what;
    return what;
  }
  ADD_FAILURE() << "no DataError for:\n" << text;
  return {};
}

#define EXPECT_CSV_ERROR(text, substring, ...)                          \
  do {                                                                  \
    const std::string message_ = data_error(dir, text, ##__VA_ARGS__);  \
    EXPECT_NE(message_.find(substring), std::string::npos) << message_; \
  } while (0)

TEST(CsvReader, HeaderAndIntegerTargetMakeAClassificationTask) {
  ScratchDir dir;
  auto source = load_csv(dir, "a,b,label\n1,10,0\n2,20,2\n3,30,1\n4,40,2\n");
  EXPECT_EQ(source->spec().task, TaskKind::kClassification);
  EXPECT_EQ(source->spec().num_classes, 3);
  EXPECT_EQ(source->spec().input_shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(source->size(), 4);
  EXPECT_NE(source->description().find("'label'"), std::string::npos) << source->description();

  const Batch b = draw(*source, 64);
  EXPECT_EQ(b.input.sizes(), (at::IntArrayRef{64, 2}));
  EXPECT_EQ(b.input.scalar_type(), at::kFloat);
  EXPECT_EQ(b.target.sizes(), (at::IntArrayRef{64}));
  EXPECT_EQ(b.target.scalar_type(), at::kLong);
  // Both feature columns are 1..4 up to scale: standardized, they are (r - 2.5) / sqrt(1.25).
  for (int64_t k = 0; k < 64; ++k) {
    const int64_t label = b.target[k].item<int64_t>();
    const float x0 = b.input[k][0].item<float>();
    EXPECT_FLOAT_EQ(x0, b.input[k][1].item<float>());
    const double row = x0 * std::sqrt(1.25) + 2.5;
    const int64_t expected_label[] = {0, 2, 1, 2};
    EXPECT_EQ(label, expected_label[std::lround(row) - 1]) << "row " << row;
    EXPECT_NEAR(row, std::round(row), 1e-5);
  }
}

TEST(CsvReader, NonIntegerTargetMakesARegressionTask) {
  ScratchDir dir;
  auto source = load_csv(dir, "0.5, 7, 1.25\n1.5, 7, -2\n");
  EXPECT_EQ(source->spec().task, TaskKind::kRegression);
  EXPECT_EQ(source->spec().target_dim, 1);
  const Batch b = draw(*source, 16);
  EXPECT_EQ(b.target.sizes(), (at::IntArrayRef{16, 1}));
  EXPECT_EQ(b.target.scalar_type(), at::kFloat);
  for (int64_t k = 0; k < 16; ++k) {
    const float y = b.target[k][0].item<float>();
    ASSERT_TRUE(y == 1.25f || y == -2.0f) << y;
    EXPECT_FLOAT_EQ(b.input[k][0].item<float>(), y == 1.25f ? -1.0f : 1.0f);
    // A constant column is centred, not divided by a zero deviation.
    EXPECT_FLOAT_EQ(b.input[k][1].item<float>(), 0.0f);
  }
}

TEST(CsvReader, LargeOrNegativeIntegersAreRegression) {
  ScratchDir dir;
  EXPECT_EQ(load_csv(dir, "1,0\n2,1000\n")->spec().task, TaskKind::kRegression);
  EXPECT_EQ(load_csv(dir, "1,0\n2,-1\n")->spec().task, TaskKind::kRegression);
  EXPECT_EQ(load_csv(dir, "1,0\n2,999\n")->spec().num_classes, 1000);
}

TEST(CsvReader, TargetColumnCanBeChosen) {
  ScratchDir dir;
  auto source = load_csv(dir, "5,0.5,0.25\n6,1.5,0.75\n", 0);
  EXPECT_EQ(source->spec().task, TaskKind::kClassification);
  EXPECT_EQ(source->spec().num_classes, 7);
  const Batch b = draw(*source, 16);
  for (int64_t k = 0; k < 16; ++k) {
    const int64_t y = b.target[k].item<int64_t>();
    EXPECT_FLOAT_EQ(b.input[k][0].item<float>(), y == 5 ? -1.0f : 1.0f);
  }
  EXPECT_CSV_ERROR("1,2,3\n", "target column 3 (0-based) is out of range; the file has 3", 3);
  DataConfig data;
  data.kind = DataKind::kCSV;
  data.path = (dir / "table.csv").string();
  data.csv_target_column = -2;
  EXPECT_THROW(make_data_source(data, ModelConfig{}, 0), ConfigError);
}

TEST(CsvReader, AcceptsCrLfBlankLinesQuotesAndSigns) {
  ScratchDir dir;
  auto source = load_csv(dir, "\"x\",\"y\"\r\n+1.5e0,\"1\"\r\n\r\n-2,0\r\n");
  EXPECT_EQ(source->size(), 2);
  EXPECT_EQ(source->spec().num_classes, 2);
}

TEST(CsvReader, ErrorsNameTheLineAndColumn) {
  ScratchDir dir;
  EXPECT_CSV_ERROR("", "empty file");
  EXPECT_CSV_ERROR("\n\n", "empty file");
  EXPECT_CSV_ERROR("a,b\n", "no data rows");
  EXPECT_CSV_ERROR("1\n2\n", "need at least 2");
  EXPECT_CSV_ERROR("1;2\n3;4\n", "need at least 2");
  EXPECT_CSV_ERROR("a,b,c\n1,2,3\n4,5\n", "line 3 has 2 fields, expected 3 (as in line 2)");
  EXPECT_CSV_ERROR("1,2,3\n4,5,6,7\n", "line 2 has 4 fields, expected 3");
  EXPECT_CSV_ERROR("a,b\n1,2\n3,x7\n", "line 3, column 2: 'x7' is not a number");
  EXPECT_CSV_ERROR("1,2\n3,\n", "line 2, column 2: an empty field is not a number");
  EXPECT_CSV_ERROR("1,2\n3,4abc\n", "'4abc' is not a number");
  EXPECT_CSV_ERROR("1,2\nnan,4\n", "line 2, column 1: 'nan' is not a finite number");
  // A second non-numeric row is not another header.
  EXPECT_CSV_ERROR("a,b\nc,d\n1,2\n", "line 2, column 1: 'c' is not a number");
  test::write_file(dir / "table.csv", "");
  DataConfig data;
  data.kind = DataKind::kCSV;
  data.path = (dir / "missing.csv").string();
  try {
    make_data_source(data, ModelConfig{}, 0);
    ADD_FAILURE() << "no error for a missing file";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.csv': no such file"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ampscope::engine
