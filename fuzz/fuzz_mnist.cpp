// libFuzzer target: the MNIST IDX reader. Input: 2 bytes (big-endian) giving the
// length of the images file, the images file, then the labels file.
#include <cstddef>
#include <cstdint>

#include "engine/data/mnist.h"
#include "engine/errors.h"
#include "fuzz/fuzz_data_common.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t split = std::min<size_t>(size - 2, (static_cast<size_t>(data[0]) << 8) | data[1]);
  const auto bytes = ampscope::fuzz::as_view(data + 2, size - 2);
  const std::string images = ampscope::fuzz::write_input("train-images-idx3-ubyte", bytes.substr(0, split));
  const std::string labels = ampscope::fuzz::write_input("train-labels-idx1-ubyte", bytes.substr(split));
  try {
    auto source = ampscope::engine::data::make_mnist_source(images, labels);
    ampscope::fuzz::draw_a_batch(*source);
  } catch (const ampscope::engine::EngineError&) {
    // A clear refusal is the right answer to a bad file; anything else escapes and is a finding.
  }
  return 0;
}
