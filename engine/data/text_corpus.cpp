#include "engine/data/text_corpus.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <array>

#include "engine/data/file_bytes.h"
#include "engine/data/tensor_source.h"
#include "engine/errors.h"

namespace ampscope::engine::data {
namespace {

constexpr std::string_view kWhat = "text file";

class TextCorpusSource : public DataSource {
 public:
  TextCorpusSource(at::Tensor tokens, int64_t seq_len, int64_t vocab, std::string description)
      : tokens_(std::move(tokens)), seq_len_(seq_len), description_(std::move(description)) {
    spec_.task = TaskKind::kLanguageModel;
    spec_.input_shape = {seq_len};
    spec_.num_classes = vocab;
  }

  const SampleSpec& spec() const override { return spec_; }
  std::string description() const override { return description_; }
  // Start positions that leave seq_len + 1 bytes for input and target.
  int64_t size() const override { return tokens_.size(0) - seq_len_; }

  Batch sample_batch(int64_t batch_size, at::Generator& generator) override {
    const at::Tensor starts = draw_indices(size(), batch_size, generator);
    const at::Tensor offsets = at::arange(seq_len_ + 1, at::kLong);
    const at::Tensor positions = starts.unsqueeze(1) + offsets.unsqueeze(0);
    const at::Tensor window = tokens_.index_select(0, positions.reshape({-1}))
                                  .reshape({batch_size, seq_len_ + 1})
                                  .to(at::kLong);
    return {window.narrow(1, 0, seq_len_).contiguous(), window.narrow(1, 1, seq_len_).contiguous()};
  }

 private:
  at::Tensor tokens_;  // [L] uint8 vocabulary indices; a byte file has at most 256 symbols
  int64_t seq_len_;
  std::string description_;
  SampleSpec spec_;
};

}  // namespace

std::unique_ptr<DataSource> make_text_source(const std::string& path, int64_t seq_len) {
  if (seq_len < 1) {
    throw ConfigError(fmt::format("sequence length must be at least 1, got {}", seq_len));
  }
  const std::string bytes = read_file_bytes(path, kWhat);
  if (bytes.empty()) throw DataError(fmt::format("{} '{}': empty file", kWhat, path));
  const auto length = static_cast<int64_t>(bytes.size());
  if (length < seq_len + 2) {
    throw DataError(fmt::format(
        "{} '{}': only {} bytes, need at least {} for sequences of {} tokens (seq_len + 2)", kWhat,
        path, length, seq_len + 2, seq_len));
  }

  std::array<bool, 256> present{};
  for (const char c : bytes) present[static_cast<unsigned char>(c)] = true;
  std::array<uint8_t, 256> index_of{};
  int64_t vocab = 0;
  for (int b = 0; b < 256; ++b) {
    if (present[b]) index_of[b] = static_cast<uint8_t>(vocab++);
  }
  at::Tensor tokens = at::empty({length}, at::kByte);
  uint8_t* out = tokens.data_ptr<uint8_t>();
  for (int64_t i = 0; i < length; ++i) out[i] = index_of[static_cast<unsigned char>(bytes[i])];

  std::string description =
      fmt::format("text {}: {} bytes, {} distinct characters, sequences of {}", file_name_of(path),
                  length, vocab, seq_len);
  return std::make_unique<TextCorpusSource>(tokens, seq_len, vocab, std::move(description));
}

}  // namespace ampscope::engine::data
