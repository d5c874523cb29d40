#pragma once
// A data source that opened must also hand out batches: the fuzzers draw one.
#include <ATen/core/Generator.h>
#include <ATen/CPUGeneratorImpl.h>

#include <memory>

#include "engine/data/data_source.h"

namespace ampscope::fuzz {

inline void draw_a_batch(engine::DataSource& source) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(1);
  const auto batch = source.sample_batch(4, generator);
  (void)batch;
}

}  // namespace ampscope::fuzz
