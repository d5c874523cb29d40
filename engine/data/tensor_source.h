#pragma once
// A data set held in memory as two tensors whose first dimension indexes samples.
// Every reader and synthetic task ends up as one of these.
#include <ATen/ATen.h>

#include <functional>
#include <string>

#include "engine/data/data_source.h"

namespace ampscope::engine::data {

class TensorDataSource : public DataSource {
 public:
  // Applied to a gathered batch, e.g. uint8 pixels -> normalized float32. Storing the
  // raw bytes and converting per batch keeps a 60000-image set at 47 MB, not 188 MB.
  using Transform = std::function<at::Tensor(const at::Tensor&)>;

  // inputs [N, ...] and targets [N, ...] with the same N > 0.
  TensorDataSource(SampleSpec spec, std::string description, at::Tensor inputs, at::Tensor targets,
                   Transform input_transform = {}, Transform target_transform = {});

  const SampleSpec& spec() const override { return spec_; }
  std::string description() const override { return description_; }
  int64_t size() const override { return inputs_.size(0); }
  Batch sample_batch(int64_t batch_size, at::Generator& generator) override;

  // The stored (untransformed) tensors, for tests and inspection.
  const at::Tensor& inputs() const { return inputs_; }
  const at::Tensor& targets() const { return targets_; }

 private:
  SampleSpec spec_;
  std::string description_;
  at::Tensor inputs_;
  at::Tensor targets_;
  Transform input_transform_;
  Transform target_transform_;
};

// Indices of batch_size samples drawn uniformly with replacement from [0, size).
// Throws ConfigError for batch_size < 1.
at::Tensor draw_indices(int64_t size, int64_t batch_size, at::Generator& generator);

}  // namespace ampscope::engine::data
