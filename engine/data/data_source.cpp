#include "engine/data/data_source.h"

#include <fmt/format.h>

#include "engine/data/cifar10.h"
#include "engine/data/csv_table.h"
#include "engine/data/mnist.h"
#include "engine/data/synthetic.h"
#include "engine/data/text_corpus.h"
#include "engine/errors.h"

namespace ampscope::engine {

double synthetic_data_bytes(const DataConfig& data, const ModelConfig& model) {
  if (data.kind != DataKind::kSynthetic) return 0;
  switch (model.kind) {
    case ModelKind::kMLP:
    case ModelKind::kTorchScript: return data::synthetic_vectors_bytes(data.synthetic_samples);
    case ModelKind::kConvNet: return data::synthetic_images_bytes(data.synthetic_samples);
    case ModelKind::kGPT: return data::synthetic_tokens_bytes(data.synthetic_samples, model.seq_len, data.vocab_size);
  }
  return 0;
}

std::unique_ptr<DataSource> make_data_source(const DataConfig& data, const ModelConfig& model,
                                             uint64_t seed) {
  switch (data.kind) {
    case DataKind::kSynthetic:
      switch (model.kind) {
        case ModelKind::kMLP:
        case ModelKind::kTorchScript:
          return data::make_synthetic_vectors(data.synthetic_samples, seed);
        case ModelKind::kConvNet:
          return data::make_synthetic_images(data.synthetic_samples, seed);
        case ModelKind::kGPT:
          return data::make_synthetic_tokens(data.synthetic_samples, model.seq_len, data.vocab_size,
                                             seed);
      }
      break;
    case DataKind::kMNIST:
      return data::make_mnist_source(data.path, data.labels_path);
    case DataKind::kCIFAR10:
      return data::make_cifar10_source(data.path);
    case DataKind::kText:
      return data::make_text_source(data.path, model.seq_len);
    case DataKind::kCSV:
      return data::make_csv_source(data.path, data.csv_target_column);
  }
  throw ConfigError(fmt::format("unknown data kind {}", static_cast<int>(data.kind)));
}

}  // namespace ampscope::engine
