#include "engine/data/tensor_source.h"

#include <fmt/format.h>

#include <utility>

#include "engine/errors.h"

namespace ampscope::engine::data {

at::Tensor draw_indices(int64_t size, int64_t batch_size, at::Generator& generator) {
  if (batch_size < 1) {
    throw ConfigError(fmt::format("batch size must be at least 1, got {}", batch_size));
  }
  return at::randint(0, size, {batch_size}, generator, at::TensorOptions().dtype(at::kLong));
}

TensorDataSource::TensorDataSource(SampleSpec spec, std::string description, at::Tensor inputs,
                                   at::Tensor targets, Transform input_transform,
                                   Transform target_transform)
    : spec_(std::move(spec)),
      description_(std::move(description)),
      inputs_(std::move(inputs)),
      targets_(std::move(targets)),
      input_transform_(std::move(input_transform)),
      target_transform_(std::move(target_transform)) {
  if (inputs_.dim() < 1 || targets_.dim() < 1 || inputs_.size(0) != targets_.size(0) ||
      inputs_.size(0) < 1) {
    throw DataError(fmt::format("{}: inconsistent or empty data set", description_));
  }
}

Batch TensorDataSource::sample_batch(int64_t batch_size, at::Generator& generator) {
  const at::Tensor idx = draw_indices(size(), batch_size, generator);
  at::Tensor input = inputs_.index_select(0, idx);
  at::Tensor target = targets_.index_select(0, idx);
  if (input_transform_) input = input_transform_(input);
  if (target_transform_) target = target_transform_(target);
  return {input.contiguous(), target.contiguous()};
}

}  // namespace ampscope::engine::data
