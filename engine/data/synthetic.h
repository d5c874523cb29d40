#pragma once
// Synthetic, learnable tasks: a small model's loss falls within a few dozen CPU
// steps, so a profile exercises a real training signal without any download.
// Every sample is generated once from the seed; batches then draw indices.
#include <cstdint>
#include <memory>

#include "engine/data/data_source.h"

namespace ampscope::engine::data {

inline constexpr int64_t kSyntheticFeatures = 32;
inline constexpr int64_t kSyntheticClasses = 10;
inline constexpr int64_t kSyntheticImageChannels = 3;
inline constexpr int64_t kSyntheticImageSize = 16;

// 32 features ~ N(0, 1); the label is the argmax of a fixed random linear "teacher"
// whose class directions have unit norm, so every logit is N(0, 1) and the classes
// come out roughly balanced. Linearly separable: an MLP learns it quickly.
std::unique_ptr<DataSource> make_synthetic_vectors(int64_t samples, uint64_t seed);

// 3x16x16 images: a smooth random template per class (a 4x4 grid of N(0, 1)
// upsampled bilinearly) plus N(0, 0.5^2) noise per pixel.
std::unique_ptr<DataSource> make_synthetic_images(int64_t samples, uint64_t seed);

// Token sequences that follow a fixed random permutation of the vocabulary:
// next = perm[prev], from a random first token per sequence. A bigram model drives
// the loss to ~0. input [T] and target [T] = the same sequence shifted by one.
std::unique_ptr<DataSource> make_synthetic_tokens(int64_t samples, int64_t seq_len,
                                                  int64_t vocab_size, uint64_t seed);

// The host memory the makers above hold at once, in bytes (double: the settings'
// products overflow int64 long before they fit in memory). Checked before they run:
// where the kernel overcommits memory (vm.overcommit_memory=1, common on GPU servers)
// an allocation beyond the machine's memory succeeds, and the filling that follows
// hangs (a billion-token window's loop) or ends in the OOM killer instead of a message.
double synthetic_vectors_bytes(int64_t samples);
double synthetic_images_bytes(int64_t samples);
double synthetic_tokens_bytes(int64_t samples, int64_t seq_len, int64_t vocab_size);

}  // namespace ampscope::engine::data
