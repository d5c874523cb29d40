// libFuzzer target: opening and reading a session file (SQLite) that may be anything.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "fuzz/fuzz_input.h"
#include "profiler/store/session_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ampscope::fuzz::write_input("s.ampscope", ampscope::fuzz::as_view(data, size));
  try {
    const auto session = ampscope::profiler::SessionReader::open(path);
    (void)session.meta();
    (void)session.meta_values();
    (void)session.steps();
    (void)session.op_stats();
    (void)session.ops();
    (void)session.kernels();
    (void)session.top_kernels(10);
    (void)session.gradient_steps();
    (void)session.latest_gradients();
    (void)session.category_totals();
  } catch (const std::runtime_error&) {
    // StoreError (and the runtime_errors of bad rows) name the file: the right answer.
  }
  return 0;
}
