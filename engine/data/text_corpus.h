#pragma once
// A text file as a character-level (byte-level) language-modelling corpus.
#include <cstdint>
#include <memory>
#include <string>

#include "engine/data/data_source.h"

namespace ampscope::engine::data {

// The vocabulary is the distinct bytes of the file, sorted, and a token is a byte's
// index in it (so num_classes is the vocabulary size). A sample is seq_len + 1
// consecutive bytes from any start position: input [T] and target [T] shifted by one.
// Throws DataError for a missing/empty file or one shorter than seq_len + 2 bytes,
// ConfigError for seq_len < 1.
std::unique_ptr<DataSource> make_text_source(const std::string& path, int64_t seq_len);

}  // namespace ampscope::engine::data
