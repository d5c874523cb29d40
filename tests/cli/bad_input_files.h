#pragma once
// Broken inputs for the bad-input table (tests/cli/test_bad_input_table.cpp): data
// files byte by byte as their formats define them, TorchScript modules built in C++,
// and damaged copies of a real session.
#include <torch/script.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/test_support.h"

namespace ampscope::test::bad_input {

namespace fs = std::filesystem;

inline std::string be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

constexpr uint32_t kImagesMagic = 0x00000803, kLabelsMagic = 0x00000801;

// An IDX images file: the header promises `count` images of rows x cols; `pixel_bytes` follow.
inline std::string idx_images(uint32_t count, uint32_t rows, uint32_t cols, size_t pixel_bytes,
                              uint32_t magic = kImagesMagic) {
  return be32(magic) + be32(count) + be32(rows) + be32(cols) + std::string(pixel_bytes, '\x40');
}

// An IDX labels file with the given label bytes (the header counts them).
inline std::string idx_labels(const std::string& labels, uint32_t magic = kLabelsMagic) {
  return be32(magic) + be32(static_cast<uint32_t>(labels.size())) + labels;
}

// Writes a good MNIST pair of `n` 4x4 images into dir; returns the images path.
inline std::string mnist_pair(const fs::path& dir, uint32_t n, const std::string& labels) {
  write_file(dir / "train-images-idx3-ubyte", idx_images(n, 4, 4, size_t{n} * 16));
  write_file(dir / "train-labels-idx1-ubyte", idx_labels(labels));
  return (dir / "train-images-idx3-ubyte").string();
}

constexpr size_t kCifarRecord = 1 + 3 * 32 * 32;

// `n` CIFAR-10 records with the given label.
inline std::string cifar_records(size_t n, unsigned char label) {
  std::string bytes;
  for (size_t i = 0; i < n; ++i) bytes += static_cast<char>(label) + std::string(kCifarRecord - 1, '\x20');
  return bytes;
}

// A TorchScript module with a [out, 32] weight and the given forward (TorchScript source),
// saved as torch.jit.save would: the synthetic vectors have 32 features and 10 classes.
inline void save_torchscript(const fs::path& path, const std::string& forward, int64_t out = 10,
                             bool with_weight = true) {
  torch::jit::Module module("__torch__.BadInputModel");
  // Trainable, as an nn.Parameter saved from Python is.
  if (with_weight) module.register_parameter("weight", torch::randn({out, 32}).requires_grad_(), /*is_buffer=*/false);
  module.define(forward);
  module.save(path.string());
}

inline std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A copy of `from` with `bytes` written at `offset` (SQLite's header: user_version at 60,
// application_id at 68, both big-endian).
inline void patched_copy(const fs::path& from, const fs::path& to, size_t offset, const std::string& bytes) {
  std::string content = read_bytes(from);
  content.replace(offset, bytes.size(), bytes);
  write_file(to, content);
}

}  // namespace ampscope::test::bad_input
