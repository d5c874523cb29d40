#pragma once
// An op's signature (profiler/op_signature.h: name, phase, autocast category,
// module, input dtypes and shapes, output dtypes). A training step repeats the same
// few hundred signatures thousands of times, so a session stores each once, in
// op_signatures, and every op call refers to its signature's id (issue #27: the
// text columns were most of the writer's time and of the file).
//
// OpSignatureIds is the writer thread's map from signature to id. Ids only grow:
// after a rolled-back transaction, clear() forgets every signature (their rows may
// be gone), and the next op of each signature stores it again under a new id, so
// a file may hold one signature under several ids; readers never rely on one id
// per signature.
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler::store_detail {

class OpSignatureIds {
 public:
  struct Found {
    int64_t id = 0;
    bool is_new = false;  // the caller stores op's signature under id
  };
  Found find_or_add(const OpRecord& op);
  void clear();
  size_t size() const { return size_; }

 private:
  struct Signature {
    std::string name, module;
    Phase phase = Phase::kOther;
    OpCategory category = OpCategory::kUnchanged;
    std::vector<DtypeName> input_dtypes;
    std::vector<Shape> input_shapes;
    std::vector<DtypeName> output_dtypes;
    int64_t id = 0;
  };
  // By hash: the signature is hashed in place, so a lookup copies nothing.
  std::unordered_map<uint64_t, std::vector<Signature>> by_hash_;
  int64_t next_id_ = 1;
  size_t size_ = 0;
};

}  // namespace ampscope::profiler::store_detail
