#pragma once
// Counts every ATen op the calling thread dispatches while one is alive (nested
// ones too): the tests that a batched statistics pass does not grow with the model.
#include <ATen/record_function.h>

#include <cstdint>
#include <memory>

namespace ampscope::test {

class DispatchedOps {
 public:
  DispatchedOps()
      : handle_(at::addThreadLocalCallback(
            at::RecordFunctionCallback(&DispatchedOps::enter).scopes({at::RecordScope::FUNCTION}))) {
    count_ = 0;
  }
  ~DispatchedOps() { at::removeCallback(handle_); }
  DispatchedOps(const DispatchedOps&) = delete;
  DispatchedOps& operator=(const DispatchedOps&) = delete;
  int64_t count() const { return count_; }

 private:
  static std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction&) {
    ++count_;
    return nullptr;
  }
  static inline thread_local int64_t count_ = 0;
  at::CallbackHandle handle_;
};

}  // namespace ampscope::test
