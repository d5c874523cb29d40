// libFuzzer target: the CSV table reader and the data source made from it.
#include <cstddef>
#include <cstdint>

#include "engine/data/csv_table.h"
#include "engine/errors.h"
#include "fuzz/fuzz_data_common.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ampscope::fuzz::write_input("table.csv", ampscope::fuzz::as_view(data, size));
  try {
    auto source = ampscope::engine::data::make_csv_source(path, -1);
    ampscope::fuzz::draw_a_batch(*source);
  } catch (const ampscope::engine::EngineError&) {
  }
  return 0;
}
