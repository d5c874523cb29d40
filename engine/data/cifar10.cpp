#include "engine/data/cifar10.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "engine/data/file_bytes.h"
#include "engine/data/tensor_source.h"
#include "engine/errors.h"

namespace ampscope::engine::data {
namespace {

constexpr std::string_view kFileWhat = "CIFAR-10 file";

// The batch files under a directory, in the order the data set numbers them.
std::vector<std::string> batch_files_in(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (int i = 1; i <= 5; ++i) {
    const std::string p = (fs::path(dir) / fmt::format("data_batch_{}.bin", i)).string();
    if (path_kind(p) == PathKind::kFile) files.push_back(p);
  }
  if (files.empty()) {
    const std::string p = (fs::path(dir) / "test_batch.bin").string();
    if (path_kind(p) == PathKind::kFile) files.push_back(p);
  }
  return files;
}

}  // namespace

std::unique_ptr<DataSource> make_cifar10_source(const std::string& path) {
  const PathKind kind = path_kind(path);
  if (kind == PathKind::kMissing) {
    throw DataError(fmt::format("CIFAR-10 path '{}': no such file or directory", path));
  }
  std::vector<std::string> files;
  if (kind == PathKind::kDirectory) {
    files = batch_files_in(path);
    if (files.empty()) {
      throw DataError(fmt::format(
          "CIFAR-10 directory '{}': no data_batch_1.bin ... data_batch_5.bin or test_batch.bin "
          "in it; point it at the extracted cifar-10-batches-bin directory",
          path));
    }
  } else {
    files.push_back(path);
  }

  std::string records;
  for (const std::string& file : files) {
    std::string bytes = read_file_bytes(file, kFileWhat);
    if (bytes.empty()) throw DataError(fmt::format("{} '{}': empty file", kFileWhat, file));
    if (bytes.size() % kCifarRecordBytes != 0) {
      throw DataError(fmt::format(
          "{} '{}': size {} bytes is not a multiple of the {}-byte record; truncated or not a "
          "CIFAR-10 binary batch{}",
          kFileWhat, file, bytes.size(), kCifarRecordBytes,
          bytes.size() % (kCifarRecordBytes + 1) == 0 ? " (CIFAR-100 has 2 label bytes)" : ""));
    }
    const size_t n = bytes.size() / kCifarRecordBytes;
    for (size_t i = 0; i < n; ++i) {
      const auto label = static_cast<unsigned char>(bytes[i * kCifarRecordBytes]);
      if (label >= kCifarClasses) {
        throw DataError(
            fmt::format("{} '{}': label {} of record {} is out of range (expected 0-{})", kFileWhat,
                        file, label, i, kCifarClasses - 1));
      }
    }
    records += bytes;
  }

  const auto n = static_cast<int64_t>(records.size() / kCifarRecordBytes);
  at::Tensor all = at::empty({n, kCifarRecordBytes}, at::kByte);
  std::memcpy(all.data_ptr<uint8_t>(), records.data(), records.size());
  at::Tensor labels = all.select(1, 0).to(at::kLong);
  at::Tensor pixels = all.narrow(1, 1, kCifarImageBytes).reshape({n, 3, 32, 32}).contiguous();

  const at::Tensor mean =
      at::tensor(at::ArrayRef<double>(kCifarMean.data(), 3), at::kFloat).reshape({1, 3, 1, 1});
  const at::Tensor std =
      at::tensor(at::ArrayRef<double>(kCifarStd.data(), 3), at::kFloat).reshape({1, 3, 1, 1});
  auto normalize = [mean, std](const at::Tensor& x) {
    return (x.to(at::kFloat) / 255.0 - mean) / std;
  };

  SampleSpec spec;
  spec.task = TaskKind::kClassification;
  spec.input_shape = {3, 32, 32};
  spec.num_classes = kCifarClasses;
  const std::string source_name =
      files.size() == 1 ? file_name_of(files.front())
                        : fmt::format("{} ({} batch files)", file_name_of(path), files.size());
  return std::make_unique<TensorDataSource>(
      spec,
      fmt::format("CIFAR-10 {}: {} images 3x32x32, {} classes", source_name, n, kCifarClasses),
      pixels, labels, normalize);
}

}  // namespace ampscope::engine::data
