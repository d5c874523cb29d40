#pragma once
// Training configs small enough that a CPU test step takes milliseconds.
#include "engine/config.h"

namespace ampscope::test {

// An MLP of width `width` on synthetic vectors, batch `batch`, on the CPU.
inline engine::TrainConfig tiny_mlp(int64_t steps, int64_t width = 16, int64_t batch = 8, int64_t samples = 64) {
  engine::TrainConfig c;
  c.model.kind = engine::ModelKind::kMLP;
  c.model.width = width;
  c.device = engine::DeviceChoice::kCPU;
  c.batch_size = batch;
  c.steps = steps;
  c.data.synthetic_samples = samples;
  return c;
}

// 1 decoder block, d=32, 4 heads, T=8, vocabulary 16, batch 4, synthetic tokens, on the CPU.
inline engine::TrainConfig tiny_gpt(engine::Precision precision, int64_t steps) {
  engine::TrainConfig c;
  c.model.kind = engine::ModelKind::kGPT;
  c.model.layers = 1;
  c.model.width = 32;
  c.model.heads = 4;
  c.model.seq_len = 8;
  c.data.vocab_size = 16;
  c.data.synthetic_samples = 128;
  c.batch_size = 4;
  c.precision = precision;
  c.device = engine::DeviceChoice::kCPU;
  c.steps = steps;
  return c;
}

}  // namespace ampscope::test
