#pragma once
// A source of training batches. Every source yields CPU tensors; the trainer
// moves them to the device. Sampling draws from the generator it is given, so a
// run is deterministic for a seed.
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/config.h"

namespace ampscope::engine {

enum class TaskKind {
  kClassification,  // input [B, ...] float32, target [B] int64 class index
  kLanguageModel,   // input [B, T] int64 tokens, target [B, T] int64 next tokens
  kRegression,      // input [B, F] float32, target [B, K] float32
};

struct SampleSpec {
  TaskKind task = TaskKind::kClassification;
  std::vector<int64_t> input_shape;  // one sample's shape: {F}, {C, H, W} or {T}
  int64_t num_classes = 0;           // classes, or the vocabulary size for kLanguageModel
  int64_t target_dim = 0;            // kRegression: values per target
};

struct Batch {
  at::Tensor input;
  at::Tensor target;
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual const SampleSpec& spec() const = 0;
  // One line for logs and the GUI, e.g. "MNIST train-images-idx3-ubyte: 60000 images 1x28x28".
  virtual std::string description() const = 0;
  virtual int64_t size() const = 0;  // samples (sequences' start positions for text)
  // A batch of batch_size samples drawn with `generator` (a CPU generator).
  virtual Batch sample_batch(int64_t batch_size, at::Generator& generator) = 0;
};

// Builds the source a config asks for. The synthetic task depends on the model:
// vectors for the MLP, images for the ConvNet, token sequences for the GPT.
// The host memory make_data_source's synthetic data set holds, in bytes; 0 for data
// read from files (their size on disk is checked instead).
double synthetic_data_bytes(const DataConfig& data, const ModelConfig& model);

// Throws DataError (unreadable/corrupt files) or ConfigError (impossible settings).
std::unique_ptr<DataSource> make_data_source(const DataConfig& data, const ModelConfig& model,
                                             uint64_t seed);

}  // namespace ampscope::engine
