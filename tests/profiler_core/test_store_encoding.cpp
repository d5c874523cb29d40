// The ops table's dtype and shape lists: compact JSON written by hand on the writer's
// thread, read back by the reader (nlohmann) and by anyone with json_extract().
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "profiler/store/session_schema.h"

namespace ampscope::profiler::store_detail {
namespace {

TEST(StoreEncoding, DtypeListsAreJsonThatReadsBackTheSame) {
  const std::vector<std::string> dtypes{"float32", "", "wrapped:float64", "bfloat16"};
  const std::string text = encode_strings(dtypes);
  EXPECT_EQ(text, R"(["float32","","wrapped:float64","bfloat16"])");
  EXPECT_EQ(decode_strings(text), dtypes);
  // Names that need escaping (a custom op's odd dtype text) stay valid JSON.
  const std::vector<std::string> odd{"a\"b", "back\\slash", std::string("tab\tnul\x01", 9)};
  const std::string odd_text = encode_strings(odd);
  EXPECT_EQ(nlohmann::json::parse(odd_text).get<std::vector<std::string>>(), odd);
  EXPECT_EQ(decode_strings(odd_text), odd);
  EXPECT_EQ(encode_strings({}), "[]");
}

TEST(StoreEncoding, ShapeListsAreJsonThatReadsBackTheSame) {
  const std::vector<Shape> shapes{{16, 32}, {}, {std::numeric_limits<int64_t>::max()}, {-1, 0, 7}};
  const std::string text = encode_shapes(shapes);
  EXPECT_EQ(text, "[[16,32],[],[9223372036854775807],[-1,0,7]]");
  EXPECT_EQ(decode_shapes(text), shapes);
  EXPECT_EQ(encode_shapes({}), "[]");
}

TEST(StoreEncoding, EncodingIntoABufferReplacesWhatItHeld) {
  std::string buffer = encode_shapes({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}});
  encode_shapes_into(buffer, {{2}});
  EXPECT_EQ(buffer, "[[2]]");
  encode_strings_into(buffer, {"float16"});
  EXPECT_EQ(buffer, R"(["float16"])");
}

}  // namespace
}  // namespace ampscope::profiler::store_detail
