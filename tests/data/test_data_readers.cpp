// The file readers for MNIST (IDX), CIFAR-10 (binary batches) and text corpora: tiny
// files written here are read back exactly, and broken ones fail with a message that
// names the file and the problem.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/data/cifar10.h"
#include "engine/data/csv_table.h"
#include "engine/data/file_bytes.h"
#include "engine/data/load_stop.h"
#include "engine/data/data_source.h"
#include "engine/data/mnist.h"
#include "engine/errors.h"
#include "tests/support/test_support.h"

namespace ampscope::engine {
namespace {

using test::ScratchDir;
using test::write_file;

std::string be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// count images of rows x cols whose pixel p of image i is (i * 7 + p) mod 256.
std::string idx_images(uint32_t count, uint32_t rows, uint32_t cols) {
  std::string s = be32(data::kIdxImagesMagic) + be32(count) + be32(rows) + be32(cols);
  for (uint32_t i = 0; i < count; ++i) {
    for (uint32_t p = 0; p < rows * cols; ++p) s.push_back(static_cast<char>((i * 7 + p) % 256));
  }
  return s;
}

std::string idx_labels(const std::vector<uint8_t>& labels) {
  std::string s = be32(data::kIdxLabelsMagic) + be32(static_cast<uint32_t>(labels.size()));
  for (uint8_t l : labels) s.push_back(static_cast<char>(l));
  return s;
}

std::unique_ptr<DataSource> load(DataKind kind, const std::filesystem::path& path,
                                 const std::string& labels = {}, int64_t seq_len = 4) {
  DataConfig data;
  data.kind = kind;
  data.path = path.string();
  data.labels_path = labels;
  ModelConfig model;
  model.seq_len = seq_len;
  return make_data_source(data, model, 0);
}

// Every sample at least once: a large batch drawn with replacement, then matched by target.
Batch draw(DataSource& source, int64_t batch) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(0);
  return source.sample_batch(batch, gen);
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << "multi-line message: " << what;
    return what;
  }
  ADD_FAILURE() << "no DataError thrown";
  return {};
}

#define EXPECT_DATA_ERROR(statement, substring)                         \
  do {                                                                  \
    const std::string message_ = error_of([&] { (void)(statement); });  \
    EXPECT_NE(message_.find(substring), std::string::npos) << message_; \
  } while (0)

// ---- MNIST ------------------------------------------------------------------------

TEST(MnistReader, ReadsPixelsAndLabelsExactlyAndNormalizes) {
  ScratchDir dir;
  const std::vector<uint8_t> labels = {3, 0, 9};
  write_file(dir / "train-images-idx3-ubyte", idx_images(3, 28, 28));
  write_file(dir / "train-labels-idx1-ubyte", idx_labels(labels));
  auto source = load(DataKind::kMNIST, dir / "train-images-idx3-ubyte");
  EXPECT_EQ(source->size(), 3);
  EXPECT_EQ(source->spec().task, TaskKind::kClassification);
  EXPECT_EQ(source->spec().input_shape, (std::vector<int64_t>{1, 28, 28}));
  EXPECT_EQ(source->spec().num_classes, 10);
  EXPECT_EQ(source->description(), "MNIST train-images-idx3-ubyte: 3 images 1x28x28, 10 classes");

  const Batch b = draw(*source, 64);
  EXPECT_EQ(b.input.sizes(), (at::IntArrayRef{64, 1, 28, 28}));
  EXPECT_EQ(b.input.scalar_type(), at::kFloat);
  EXPECT_EQ(b.target.scalar_type(), at::kLong);
  std::vector<bool> seen(3, false);
  for (int64_t k = 0; k < 64; ++k) {
    const int64_t label = b.target[k].item<int64_t>();
    const int64_t i = std::find(labels.begin(), labels.end(), label) - labels.begin();
    ASSERT_LT(i, 3) << "unknown label " << label;
    seen[i] = true;
    const at::Tensor raw = (at::arange(784, at::kLong) + 7 * i).remainder(256).to(at::kFloat);
    const at::Tensor expected = ((raw / 255.0 - 0.1307) / 0.3081).reshape({1, 28, 28});
    EXPECT_TRUE(at::allclose(b.input[k], expected, 1e-5, 1e-5)) << "image " << i;
  }
  EXPECT_TRUE(seen[0] && seen[1] && seen[2]);
}

TEST(MnistReader, DerivesTheLabelsFileOrTakesItGiven) {
  EXPECT_EQ(data::mnist_labels_path_for("/d/t10k-images-idx3-ubyte"), "/d/t10k-labels-idx1-ubyte");
  EXPECT_EQ(data::mnist_labels_path_for("/d/train-images.idx3-ubyte"),
            "/d/train-labels.idx1-ubyte");
  EXPECT_EQ(data::mnist_labels_path_for("/d/pixels.bin"), "");

  ScratchDir dir;
  write_file(dir / "pixels.bin", idx_images(2, 4, 5));
  write_file(dir / "my-labels", idx_labels({1, 2}));
  auto source = load(DataKind::kMNIST, dir / "pixels.bin", (dir / "my-labels").string());
  EXPECT_EQ(source->spec().input_shape, (std::vector<int64_t>{1, 4, 5}));
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, dir / "pixels.bin"), "cannot derive the labels file");
}

TEST(MnistReader, RejectsBrokenFiles) {
  ScratchDir dir;
  const auto images = dir / "train-images-idx3-ubyte";
  const auto labels = dir / "train-labels-idx1-ubyte";
  const std::string good_images = idx_images(2, 3, 3);
  const std::string good_labels = idx_labels({1, 2});

  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "no such file");
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), images.string());

  write_file(images, good_images);
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "MNIST labels file");
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "no such file");

  write_file(labels, good_labels);
  EXPECT_NO_THROW(load(DataKind::kMNIST, images));

  write_file(images, good_images.substr(0, good_images.size() - 1));
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "truncated or corrupt");
  write_file(images, good_images + "x");
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "truncated or corrupt");
  write_file(images, good_images.substr(0, 10));
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "truncated header");
  write_file(images, "");
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "truncated header");
  // A corrupt header whose count * rows * cols would overflow 64 bits.
  write_file(images, be32(data::kIdxImagesMagic) + be32(0xffffffff) + be32(0xffffffff) +
                         be32(0xffffffff) + "abc");
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "truncated or corrupt");

  write_file(images, good_labels + std::string(8, '\0'));
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "bad magic number 0x00000801");
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "is this the labels file?");
  write_file(images, good_images);

  write_file(labels, idx_labels({1, 2, 3}));
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "3 labels but the images file");
  write_file(labels, good_labels.substr(0, good_labels.size() - 1));
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "truncated or corrupt");
  write_file(labels, idx_labels({1, 10}));
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "label 10 of sample 1 is out of range");
  write_file(labels, good_images);
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "is this the images file?");

  write_file(images, idx_images(0, 28, 28));
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, images), "empty data set");
  EXPECT_DATA_ERROR(load(DataKind::kMNIST, dir.path()), "is a directory");
}

// ---- CIFAR-10 ---------------------------------------------------------------------

// Records whose label is labels[i] and pixel p is (i * 13 + p) mod 256.
std::string cifar_records(const std::vector<uint8_t>& labels) {
  std::string s;
  for (size_t i = 0; i < labels.size(); ++i) {
    s.push_back(static_cast<char>(labels[i]));
    for (int p = 0; p < 3072; ++p) s.push_back(static_cast<char>((i * 13 + p) % 256));
  }
  return s;
}

TEST(Cifar10Reader, ReadsRecordsExactlyAndNormalizesPerChannel) {
  ScratchDir dir;
  const std::vector<uint8_t> labels = {4, 7};
  write_file(dir / "test_batch.bin", cifar_records(labels));
  for (const auto& path : {dir.path(), dir / "test_batch.bin"}) {
    auto source = load(DataKind::kCIFAR10, path);
    EXPECT_EQ(source->size(), 2);
    EXPECT_EQ(source->spec().input_shape, (std::vector<int64_t>{3, 32, 32}));
    EXPECT_EQ(source->spec().num_classes, 10);
    EXPECT_NE(source->description().find("2 images 3x32x32"), std::string::npos);
    const Batch b = draw(*source, 16);
    EXPECT_EQ(b.input.sizes(), (at::IntArrayRef{16, 3, 32, 32}));
    EXPECT_EQ(b.input.scalar_type(), at::kFloat);
    const at::Tensor mean = at::tensor({0.4914f, 0.4822f, 0.4465f}).reshape({3, 1, 1});
    const at::Tensor std = at::tensor({0.2470f, 0.2435f, 0.2616f}).reshape({3, 1, 1});
    for (int64_t k = 0; k < 16; ++k) {
      const int64_t label = b.target[k].item<int64_t>();
      ASSERT_TRUE(label == 4 || label == 7);
      const int64_t i = label == 4 ? 0 : 1;
      const at::Tensor raw =
          (at::arange(3072, at::kLong) + 13 * i).remainder(256).to(at::kFloat).reshape({3, 32, 32});
      EXPECT_TRUE(at::allclose(b.input[k], (raw / 255.0 - mean) / std, 1e-5, 1e-5));
    }
  }
}

TEST(Cifar10Reader, PrefersTheTrainingBatchesInADirectory) {
  ScratchDir dir;
  write_file(dir / "data_batch_1.bin", cifar_records({0, 1}));
  write_file(dir / "data_batch_2.bin", cifar_records({2, 3, 4}));
  write_file(dir / "test_batch.bin", cifar_records({5}));
  auto source = load(DataKind::kCIFAR10, dir.path());
  EXPECT_EQ(source->size(), 5);
  const Batch b = draw(*source, 200);
  EXPECT_EQ(b.target.max().item<int64_t>(), 4);
  EXPECT_EQ(b.target.min().item<int64_t>(), 0);
}

TEST(Cifar10Reader, RejectsBrokenInput) {
  ScratchDir dir;
  EXPECT_DATA_ERROR(load(DataKind::kCIFAR10, dir / "nope"), "no such file");
  EXPECT_DATA_ERROR(load(DataKind::kCIFAR10, dir.path()), "no data_batch_1.bin");
  write_file(dir / "data_batch_1.bin", "");
  EXPECT_DATA_ERROR(load(DataKind::kCIFAR10, dir.path()), "empty file");
  const std::string good = cifar_records({1, 2});
  write_file(dir / "data_batch_1.bin", good.substr(0, good.size() - 100));
  EXPECT_DATA_ERROR(load(DataKind::kCIFAR10, dir.path()), "not a multiple of the 3073-byte record");
  EXPECT_DATA_ERROR(load(DataKind::kCIFAR10, dir.path()), "data_batch_1.bin");
  write_file(dir / "data_batch_1.bin", cifar_records({1, 12}));
  EXPECT_DATA_ERROR(load(DataKind::kCIFAR10, dir.path()), "label 12 of record 1 is out of range");
}

// ---- Text -------------------------------------------------------------------------

TEST(TextReader, MapsBytesToSortedVocabularyAndShiftsTargets) {
  ScratchDir dir;
  const std::string text = "hello world, hello text\n";
  write_file(dir / "corpus.txt", text);
  auto source = load(DataKind::kText, dir / "corpus.txt", {}, 5);
  std::string vocab = text;
  std::sort(vocab.begin(), vocab.end());
  vocab.erase(std::unique(vocab.begin(), vocab.end()), vocab.end());
  EXPECT_EQ(source->spec().task, TaskKind::kLanguageModel);
  EXPECT_EQ(source->spec().num_classes, static_cast<int64_t>(vocab.size()));
  EXPECT_EQ(source->spec().input_shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(source->size(), static_cast<int64_t>(text.size()) - 5);

  const Batch b = draw(*source, 32);
  EXPECT_EQ(b.input.sizes(), (at::IntArrayRef{32, 5}));
  EXPECT_EQ(b.target.sizes(), (at::IntArrayRef{32, 5}));
  EXPECT_EQ(b.input.scalar_type(), at::kLong);
  for (int64_t k = 0; k < 32; ++k) {
    std::string window;
    for (int64_t t = 0; t < 5; ++t) window.push_back(vocab[b.input[k][t].item<int64_t>()]);
    window.push_back(vocab[b.target[k][4].item<int64_t>()]);
    EXPECT_NE(text.find(window), std::string::npos) << "'" << window << "' not in the text";
    EXPECT_TRUE(at::equal(b.input[k].narrow(0, 1, 4), b.target[k].narrow(0, 0, 4)));
  }
}

TEST(TextReader, RejectsMissingEmptyAndShortFiles) {
  ScratchDir dir;
  EXPECT_DATA_ERROR(load(DataKind::kText, dir / "none.txt"), "no such file");
  write_file(dir / "empty.txt", "");
  EXPECT_DATA_ERROR(load(DataKind::kText, dir / "empty.txt"), "empty file");
  write_file(dir / "short.txt", "abcde");
  EXPECT_DATA_ERROR(load(DataKind::kText, dir / "short.txt", {}, 4),
                    "only 5 bytes, need at least 6");
  write_file(dir / "ok.txt", "abcdef");
  auto source = load(DataKind::kText, dir / "ok.txt", {}, 4);
  EXPECT_EQ(source->size(), 2);
  EXPECT_THROW(load(DataKind::kText, dir / "ok.txt", {}, 0), ConfigError);
}

}  // namespace
}  // namespace ampscope::engine

namespace ampscope::engine {
namespace {

// Issue 29: a stop must not wait for a data file of gigabytes to be read and parsed.
// The readers check the flag lent to their thread between chunks (64 MiB) and every
// 65,536 CSV lines; without a flag lent, or with it unset, they read to the end.
TEST(DataLoadStop, ReadersStopBetweenChunksWhenTheRunsFlagIsSet) {
  ScratchDir dir;
  write_file(dir / "f.bin", std::string(1000, 'x'));
  std::string table;
  for (int i = 0; i < 70'000; ++i) table += std::to_string(i) + ",1\n";
  std::atomic<bool> stop{false};
  {
    const data::LoadStopScope scope(&stop);
    EXPECT_EQ(data::read_file_bytes((dir / "f.bin").string(), "data file").size(), 1000u);
    EXPECT_EQ(data::parse_csv(table, "t.csv").rows, 70'000);
    stop = true;
    EXPECT_THROW(data::read_file_bytes((dir / "f.bin").string(), "data file"), StopRequested);
    EXPECT_THROW(data::parse_csv(table, "t.csv"), StopRequested);
    {
      const data::LoadStopScope inner(nullptr);  // a load that cannot be stopped (nested: restored after)
      EXPECT_EQ(data::parse_csv(table, "t.csv").rows, 70'000);
    }
    EXPECT_THROW(data::parse_csv(table, "t.csv"), StopRequested);
  }
  EXPECT_EQ(data::parse_csv(table, "t.csv").rows, 70'000) << "the flag outlived its scope";
}

}  // namespace
}  // namespace ampscope::engine
