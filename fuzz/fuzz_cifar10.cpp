// libFuzzer target: the CIFAR-10 binary batch reader (one .bin file).
#include <cstddef>
#include <cstdint>

#include "engine/data/cifar10.h"
#include "engine/errors.h"
#include "fuzz/fuzz_data_common.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ampscope::fuzz::write_input("data_batch_1.bin", ampscope::fuzz::as_view(data, size));
  try {
    auto source = ampscope::engine::data::make_cifar10_source(path);
    ampscope::fuzz::draw_a_batch(*source);
  } catch (const ampscope::engine::EngineError&) {
  }
  return 0;
}
