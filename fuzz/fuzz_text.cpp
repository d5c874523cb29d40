// libFuzzer target: the character-level text corpus. The first byte picks the
// sequence length (1..64), the rest is the file.
#include <cstddef>
#include <cstdint>

#include "engine/data/text_corpus.h"
#include "engine/errors.h"
#include "fuzz/fuzz_data_common.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int64_t seq_len = 1 + data[0] % 64;
  const std::string path = ampscope::fuzz::write_input("corpus.txt", ampscope::fuzz::as_view(data + 1, size - 1));
  try {
    auto source = ampscope::engine::data::make_text_source(path, seq_len);
    ampscope::fuzz::draw_a_batch(*source);
  } catch (const ampscope::engine::EngineError&) {
  }
  return 0;
}
