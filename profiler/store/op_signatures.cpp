#include "profiler/store/op_signatures.h"

#include <functional>
#include <string_view>

namespace ampscope::profiler::store_detail {

namespace {

// boost::hash_combine's mix, over 64 bits.
void mix(uint64_t& seed, uint64_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

void mix_text(uint64_t& seed, std::string_view text) {
  mix(seed, std::hash<std::string_view>{}(text));
}

uint64_t signature_hash(const OpRecord& op) {
  uint64_t h = 0;
  mix_text(h, op.name);
  mix_text(h, op.module);
  mix(h, static_cast<uint64_t>(op.phase) << 8 | static_cast<uint64_t>(op.category));
  // Counts keep ["a","b"],[] apart from ["a"],["b"].
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

}  // namespace

OpSignatureIds::Found OpSignatureIds::find_or_add(const OpRecord& op) {
  std::vector<Signature>& bucket = by_hash_[signature_hash(op)];
  for (const Signature& s : bucket) {
    if (s.name == op.name && s.module == op.module && s.phase == op.phase &&
        s.category == op.category && s.input_dtypes == op.input_dtypes &&
        s.input_shapes == op.input_shapes && s.output_dtypes == op.output_dtypes)
      return {s.id, false};
  }
  bucket.push_back(Signature{op.name, op.module, op.phase, op.category, op.input_dtypes,
                             op.input_shapes, op.output_dtypes, next_id_});
  ++size_;
  return {next_id_++, true};
}

void OpSignatureIds::clear() {
  by_hash_.clear();
  size_ = 0;
}

}  // namespace ampscope::profiler::store_detail
