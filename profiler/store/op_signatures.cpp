#include "profiler/store/op_signatures.h"

#include "profiler/op_signature.h"

namespace ampscope::profiler::store_detail {

OpSignatureIds::Found OpSignatureIds::find_or_add(const OpRecord& op) {
  std::vector<Signature>& bucket = by_hash_[op_signature_hash(op)];
  for (const Signature& s : bucket)
    if (same_op_signature(s, op)) return {s.id, false};
  bucket.push_back(Signature{op.name, op.module, op.phase, op.category, op.input_dtypes, op.input_shapes,
                             op.output_dtypes, next_id_});
  ++size_;
  return {next_id_++, true};
}

void OpSignatureIds::clear() {
  by_hash_.clear();
  size_ = 0;
}

}  // namespace ampscope::profiler::store_detail
