#pragma once
// RAII autocast region with the semantics of Python's torch.autocast:
// entering saves the device's autocast state, enables it with the region's
// dtype and increments the nesting count; leaving restores the saved state and,
// when the outermost region exits, clears the cast cache (the cache holds
// lower-precision copies of fp32 weights and is valid within one region only).
// Autocast state is thread-local: a guard affects the thread that made it.
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include "engine/config.h"

namespace ampscope::engine {

class AutocastGuard {
 public:
  // With enabled == false the guard still opens a region that disables autocast
  // (like torch.autocast(enabled=False) nested in an enabled region).
  AutocastGuard(c10::DeviceType device, c10::ScalarType dtype, bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  c10::DeviceType device_;
  bool previous_enabled_;
  c10::ScalarType previous_dtype_;
};

// The autocast dtype a precision asks for, or std::nullopt for fp32 (no autocast).
std::optional<c10::ScalarType> autocast_dtype(Precision precision);

}  // namespace ampscope::engine
