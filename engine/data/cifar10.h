#pragma once
// CIFAR-10 in its binary form: records of 1 label byte + 3072 pixel bytes (3x32x32,
// channel-major: 1024 red, 1024 green, 1024 blue, each row-major).
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/data/data_source.h"

namespace ampscope::engine::data {

inline constexpr int64_t kCifarClasses = 10;
inline constexpr int64_t kCifarImageBytes = int64_t{3} * 32 * 32;
inline constexpr int64_t kCifarRecordBytes = 1 + kCifarImageBytes;
// Per-channel (R, G, B) mean and standard deviation of the training pixels in [0, 1].
inline constexpr std::array<double, 3> kCifarMean = {0.4914, 0.4822, 0.4465};
inline constexpr std::array<double, 3> kCifarStd = {0.2470, 0.2435, 0.2616};

// path: a directory holding data_batch_1.bin ... data_batch_5.bin (the training
// batches, used when any is present) or else test_batch.bin; or a single .bin file.
// Input [B, 3, 32, 32] float32, ((x / 255) - mean[c]) / std[c]; target [B] int64.
// Throws DataError.
std::unique_ptr<DataSource> make_cifar10_source(const std::string& path);

}  // namespace ampscope::engine::data
