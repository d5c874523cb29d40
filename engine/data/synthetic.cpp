#include "engine/data/synthetic.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include "engine/data/tensor_source.h"
#include "engine/errors.h"

namespace ampscope::engine::data {
namespace {

void check_samples(int64_t samples) {
  if (samples < 1) {
    throw ConfigError(
        fmt::format("synthetic data set size must be at least 1 sample, got {}", samples));
  }
}

const at::TensorOptions kFloat = at::TensorOptions().dtype(at::kFloat);
const at::TensorOptions kLong = at::TensorOptions().dtype(at::kLong);

}  // namespace

double synthetic_vectors_bytes(int64_t samples) {
  // inputs (float), the teacher's logits (float), labels (int64)
  return static_cast<double>(samples) * ((kSyntheticFeatures + kSyntheticClasses) * 4.0 + 8.0);
}

double synthetic_images_bytes(int64_t samples) {
  // the noise and the images (float), labels (int64)
  return static_cast<double>(samples) *
         (2.0 * 4.0 * static_cast<double>(kSyntheticImageChannels * kSyntheticImageSize * kSyntheticImageSize) + 8.0);
}

double synthetic_tokens_bytes(int64_t samples, int64_t seq_len, int64_t vocab_size) {
  // the permutation, the windows of seq_len + 1 tokens, and two columns of tokens (int64)
  return 8.0 * (static_cast<double>(vocab_size) + static_cast<double>(samples) * (static_cast<double>(seq_len) + 3.0));
}

std::unique_ptr<DataSource> make_synthetic_vectors(int64_t samples, uint64_t seed) {
  check_samples(samples);
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  at::Tensor teacher = at::randn({kSyntheticFeatures, kSyntheticClasses}, gen, kFloat);
  teacher = teacher / teacher.norm(2, {0}, /*keepdim=*/true);
  at::Tensor inputs = at::randn({samples, kSyntheticFeatures}, gen, kFloat);
  at::Tensor labels = inputs.matmul(teacher).argmax(1).to(at::kLong);

  SampleSpec spec;
  spec.task = TaskKind::kClassification;
  spec.input_shape = {kSyntheticFeatures};
  spec.num_classes = kSyntheticClasses;
  return std::make_unique<TensorDataSource>(
      spec,
      fmt::format("synthetic vectors: {} samples of {} features, {} classes (linear teacher)",
                  samples, kSyntheticFeatures, kSyntheticClasses),
      inputs, labels);
}

std::unique_ptr<DataSource> make_synthetic_images(int64_t samples, uint64_t seed) {
  check_samples(samples);
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const at::Tensor coarse =
      at::randn({kSyntheticClasses, kSyntheticImageChannels, 4, 4}, gen, kFloat);
  const at::Tensor templates = at::upsample_bilinear2d(
      coarse, {kSyntheticImageSize, kSyntheticImageSize}, /*align_corners=*/false);
  at::Tensor labels = at::randint(0, kSyntheticClasses, {samples}, gen, kLong);
  at::Tensor noise = at::randn(
      {samples, kSyntheticImageChannels, kSyntheticImageSize, kSyntheticImageSize}, gen, kFloat);
  at::Tensor inputs = templates.index_select(0, labels) + 0.5 * noise;

  SampleSpec spec;
  spec.task = TaskKind::kClassification;
  spec.input_shape = {kSyntheticImageChannels, kSyntheticImageSize, kSyntheticImageSize};
  spec.num_classes = kSyntheticClasses;
  return std::make_unique<TensorDataSource>(
      spec,
      fmt::format("synthetic images: {} samples {}x{}x{}, {} classes (template + noise)", samples,
                  kSyntheticImageChannels, kSyntheticImageSize, kSyntheticImageSize,
                  kSyntheticClasses),
      inputs, labels);
}

std::unique_ptr<DataSource> make_synthetic_tokens(int64_t samples, int64_t seq_len,
                                                  int64_t vocab_size, uint64_t seed) {
  check_samples(samples);
  if (seq_len < 1) {
    throw ConfigError(fmt::format("sequence length must be at least 1, got {}", seq_len));
  }
  if (vocab_size < 2) {
    throw ConfigError(
        fmt::format("synthetic vocabulary size must be at least 2, got {}", vocab_size));
  }
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const at::Tensor perm = at::randperm(vocab_size, gen, kLong);
  // Column by column: T+1 tokens per sequence so that input and target both have T.
  at::Tensor seqs = at::empty({samples, seq_len + 1}, kLong);
  at::Tensor current = at::randint(0, vocab_size, {samples}, gen, kLong);
  for (int64_t t = 0; t <= seq_len; ++t) {
    seqs.select(1, t).copy_(current);
    current = perm.index_select(0, current);
  }

  SampleSpec spec;
  spec.task = TaskKind::kLanguageModel;
  spec.input_shape = {seq_len};
  spec.num_classes = vocab_size;
  // Input and target are two views of one stored sequence, split per batch.
  auto input_of = [seq_len](const at::Tensor& s) { return s.narrow(1, 0, seq_len); };
  auto target_of = [seq_len](const at::Tensor& s) { return s.narrow(1, 1, seq_len); };
  return std::make_unique<TensorDataSource>(
      spec,
      fmt::format("synthetic tokens: {} sequences of {} tokens, vocabulary {} (permutation chain)",
                  samples, seq_len, vocab_size),
      seqs, seqs, input_of, target_of);
}

}  // namespace ampscope::engine::data
