#pragma once
// An op's signature: what it is (name, phase, autocast category, module) and what it
// ran on (input dtypes and shapes, output dtypes). The op table has a row per
// signature (and top-level or not: OpAggregator), the session stores each once
// (store_detail::OpSignatureIds). Both find it by this hash and equality, over the
// record's own fields, so a lookup builds no key and copies nothing. Any record
// type with these fields (OpRecord, OpStats) hashes and compares alike.
#include <cstdint>
#include <functional>
#include <string_view>

#include "profiler/records.h"

namespace ampscope::profiler {

namespace op_signature_detail {

// boost::hash_combine's mix, over 64 bits.
inline void mix(uint64_t& seed, uint64_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}
inline void mix_text(uint64_t& seed, std::string_view text) {
  mix(seed, std::hash<std::string_view>{}(text));
}

}  // namespace op_signature_detail

template <typename Op>
uint64_t op_signature_hash(const Op& op) {
  using op_signature_detail::mix;
  using op_signature_detail::mix_text;
  uint64_t h = 0;
  mix_text(h, op.name);
  mix_text(h, op.module);
  mix(h, static_cast<uint64_t>(op.phase) << 8 | static_cast<uint64_t>(op.category));
  // Counts keep ["a","b"],[] apart from ["a"],["b"], and [[2,3]] from [[2],[3]].
  mix(h, op.input_dtypes.size());
  for (const DtypeName& d : op.input_dtypes) mix_text(h, d);
  mix(h, op.input_shapes.size());
  for (const Shape& shape : op.input_shapes) {
    mix(h, shape.size());
    for (const int64_t dim : shape) mix(h, static_cast<uint64_t>(dim));
  }
  mix(h, op.output_dtypes.size());
  for (const DtypeName& d : op.output_dtypes) mix_text(h, d);
  return h;
}

template <typename A, typename B>
bool same_op_signature(const A& a, const B& b) {
  return a.name == b.name && a.module == b.module && a.phase == b.phase &&
         a.category == b.category && a.input_dtypes == b.input_dtypes &&
         a.input_shapes == b.input_shapes && a.output_dtypes == b.output_dtypes;
}

}  // namespace ampscope::profiler
