#pragma once
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TFRecord framing
// uses it. Debian 12 packages no C/C++ crc32c library (only python3-crc32c), so
// this is the classic byte-wise table version: 256 entries built once, ~1 ns per
// byte, which is plenty for event files (a few KiB per step). Checked against
// RFC 3720's test vectors and TensorBoard's own reader.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ampscope::profiler::tensorboard {

uint32_t crc32c(std::string_view data);

// TFRecord's masked CRC: rotate right by 15, add 0xa282ead8 (so a CRC of data
// holding CRCs does not degenerate).
uint32_t masked_crc32c(std::string_view data);

}  // namespace ampscope::profiler::tensorboard
