#pragma once
// Errors the engine reports to users. Each carries a one-line message that says
// what is wrong and, where it can, what to do about it; callers print what() as is.
#include <stdexcept>
#include <string>

namespace ampscope::engine {

class EngineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Impossible or contradictory settings (bad flag values, cuda without a GPU, ...).
class ConfigError : public EngineError {
 public:
  using EngineError::EngineError;
};

// Missing, unreadable, corrupt or inconsistent data files.
class DataError : public EngineError {
 public:
  using EngineError::EngineError;
};

// A model that cannot be built or loaded, or that does not fit the data.
class ModelError : public EngineError {
 public:
  using EngineError::EngineError;
};

// The run itself went wrong: a diverging loss, the GPU out of memory.
class TrainingError : public EngineError {
 public:
  using EngineError::EngineError;
};

// Not an error: a stop (Ctrl-C, SIGTERM, the GUI's Stop) seen inside a step, whose
// inner loops (micro-batches, validation batches) can run for hours. The step is
// abandoned; the Trainer ends the run as stopped.
struct StopRequested {};

}  // namespace ampscope::engine
