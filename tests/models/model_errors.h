#pragma once
// Shared by the model tests: the message of the ModelError a call throws.
#include <gtest/gtest.h>

#include <string>

#include "engine/errors.h"

namespace ampscope::engine {

// The ModelError's message, or a test failure when none (or another exception) is thrown.
template <typename F>
std::string model_error(F&& f) {
  try {
    f();
  } catch (const ModelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ModelError";
  return {};
}

}  // namespace ampscope::engine
