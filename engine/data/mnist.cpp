#include "engine/data/mnist.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cstring>
#include <filesystem>

#include "engine/data/file_bytes.h"
#include "engine/data/tensor_source.h"
#include "engine/errors.h"

namespace ampscope::engine::data {
namespace {

constexpr std::string_view kImagesWhat = "MNIST images file";
constexpr std::string_view kLabelsWhat = "MNIST labels file";

void check_magic(const std::string& bytes, const std::string& path, std::string_view what,
                 uint32_t expected, std::string_view other_hint) {
  const uint32_t magic = read_be_u32(bytes, 0);
  if (magic == expected) return;
  const uint32_t other = expected == kIdxImagesMagic ? kIdxLabelsMagic : kIdxImagesMagic;
  throw DataError(fmt::format("{} '{}': bad magic number 0x{:08x} (expected 0x{:08x}){}", what,
                              path, magic, expected,
                              magic == other ? fmt::format("; is this the {}?", other_hint)
                                             : std::string("; not an IDX file")));
}

}  // namespace

std::string mnist_labels_path_for(const std::string& images_path) {
  std::filesystem::path p(images_path);
  std::string name = p.filename().string();
  for (const auto& [from, to] :
       {std::pair<std::string_view, std::string_view>{"images-idx3", "labels-idx1"},
        {"images.idx3", "labels.idx1"}}) {
    const size_t at = name.find(from);
    if (at != std::string::npos) {
      name.replace(at, from.size(), to);
      return (p.parent_path() / name).string();
    }
  }
  return {};
}

std::unique_ptr<DataSource> make_mnist_source(const std::string& images_path,
                                              const std::string& labels_path_in) {
  const std::string images = read_file_bytes(images_path, kImagesWhat);
  if (images.size() < 16) {
    throw DataError(fmt::format("{} '{}': truncated header ({} bytes, expected at least 16)",
                                kImagesWhat, images_path, images.size()));
  }
  check_magic(images, images_path, kImagesWhat, kIdxImagesMagic, "labels file");
  const uint64_t count = read_be_u32(images, 4);
  const uint64_t rows = read_be_u32(images, 8);
  const uint64_t cols = read_be_u32(images, 12);
  if (count == 0 || rows == 0 || cols == 0) {
    throw DataError(fmt::format("{} '{}': empty data set ({} images of {}x{})", kImagesWhat,
                                images_path, count, rows, cols));
  }
  // rows * cols < 2^64 since both are below 2^32; compare count by division so that a
  // corrupt header cannot overflow the expected size.
  const uint64_t pixels = rows * cols;
  const uint64_t payload = images.size() - 16;
  if (payload % pixels != 0 || payload / pixels != count) {
    throw DataError(
        fmt::format("{} '{}': header promises {} images of {}x{} but the file holds {} pixel bytes "
                    "({} whole images{}); truncated or corrupt",
                    kImagesWhat, images_path, count, rows, cols, payload, payload / pixels,
                    payload % pixels != 0 ? " and a partial one" : ""));
  }

  std::string labels_path = labels_path_in;
  if (labels_path.empty()) {
    labels_path = mnist_labels_path_for(images_path);
    if (labels_path.empty()) {
      throw DataError(fmt::format(
          "{} '{}': cannot derive the labels file from the name (no 'images-idx3' in it); "
          "pass --labels-path",
          kImagesWhat, images_path));
    }
  }
  const std::string labels = read_file_bytes(labels_path, kLabelsWhat);
  if (labels.size() < 8) {
    throw DataError(fmt::format("{} '{}': truncated header ({} bytes, expected at least 8)",
                                kLabelsWhat, labels_path, labels.size()));
  }
  check_magic(labels, labels_path, kLabelsWhat, kIdxLabelsMagic, "images file");
  const uint64_t label_count = read_be_u32(labels, 4);
  if (labels.size() - 8 != label_count) {
    throw DataError(fmt::format(
        "{} '{}': file is {} bytes but the header promises {} labels ({} bytes); truncated or "
        "corrupt",
        kLabelsWhat, labels_path, labels.size(), label_count, 8 + label_count));
  }
  if (label_count != count) {
    throw DataError(fmt::format("{} '{}': {} labels but the images file '{}' has {} images",
                                kLabelsWhat, labels_path, label_count, images_path, count));
  }
  for (uint64_t i = 0; i < count; ++i) {
    const auto label = static_cast<unsigned char>(labels[8 + i]);
    if (label >= kMnistClasses) {
      throw DataError(fmt::format("{} '{}': label {} of sample {} is out of range (expected 0-{})",
                                  kLabelsWhat, labels_path, label, i, kMnistClasses - 1));
    }
  }

  const auto n = static_cast<int64_t>(count);
  const auto h = static_cast<int64_t>(rows);
  const auto w = static_cast<int64_t>(cols);
  at::Tensor pixel_tensor = at::empty({n, 1, h, w}, at::kByte);
  std::memcpy(pixel_tensor.data_ptr<uint8_t>(), images.data() + 16, payload);
  at::Tensor label_tensor = at::empty({n}, at::kByte);
  std::memcpy(label_tensor.data_ptr<uint8_t>(), labels.data() + 8, count);

  SampleSpec spec;
  spec.task = TaskKind::kClassification;
  spec.input_shape = {1, h, w};
  spec.num_classes = kMnistClasses;
  auto normalize = [](const at::Tensor& x) {
    return (x.to(at::kFloat) / 255.0 - kMnistMean) / kMnistStd;
  };
  return std::make_unique<TensorDataSource>(
      spec,
      fmt::format("MNIST {}: {} images 1x{}x{}, {} classes", file_name_of(images_path), n, h, w,
                  kMnistClasses),
      pixel_tensor, label_tensor.to(at::kLong), normalize);
}

}  // namespace ampscope::engine::data
