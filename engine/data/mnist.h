#pragma once
// MNIST in its IDX form: an images file (magic 0x00000803, big-endian dims count,
// rows, cols, then count*rows*cols pixel bytes) and a labels file (magic
// 0x00000801, count, then count label bytes).
#include <cstdint>
#include <memory>
#include <string>

#include "engine/data/data_source.h"

namespace ampscope::engine::data {

inline constexpr uint32_t kIdxImagesMagic = 0x00000803;
inline constexpr uint32_t kIdxLabelsMagic = 0x00000801;
inline constexpr int64_t kMnistClasses = 10;
// Mean and standard deviation of the MNIST training pixels scaled to [0, 1].
inline constexpr double kMnistMean = 0.1307;
inline constexpr double kMnistStd = 0.3081;

// The labels file that goes with an images file: "images-idx3" -> "labels-idx1"
// (also "images.idx3" -> "labels.idx1") in the file name. Empty when the name has
// neither.
std::string mnist_labels_path_for(const std::string& images_path);

// Input [B, 1, rows, cols] float32, ((x / 255) - kMnistMean) / kMnistStd; target [B] int64.
// labels_path empty: derived with mnist_labels_path_for. Throws DataError.
std::unique_ptr<DataSource> make_mnist_source(const std::string& images_path,
                                              const std::string& labels_path);

}  // namespace ampscope::engine::data
