// libFuzzer target: the Tensor Core rule file (resources/tensor_core_kernels.txt's format).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz/fuzz_input.h"
#include "profiler/cupti/tensor_core_rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto rules =
        ampscope::profiler::cupti::TensorCoreRules::parse(ampscope::fuzz::as_view(data, size), "fuzz.txt");
    for (const char* name : {"ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn", "sm90_xmma_gemm_bf16bf16_bf16f32",
                             "void at::native::vectorized_elementwise_kernel<4>", ""})
      (void)rules->classify(name);
    // The input is also a kernel name: arbitrary bytes, and (for inputs over
    // kMaxClassifiedNameChars, with -max_len raised) a name that is cut.
    (void)rules->classify(std::string(ampscope::fuzz::as_view(data, size)));
  } catch (const std::runtime_error&) {
    // "fuzz.txt line N: ..." is the documented refusal.
  }
  return 0;
}
