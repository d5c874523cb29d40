#pragma once
// Running a child program from the CLI and waiting for it, as a shell does: the terminal's
// Ctrl-C reaches the child too (one process group), so the CLI only notes it and waits for
// the child to stop (`ampscope run --compare`'s runs, `ampscope run --nproc-per-node`'s torchrun).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ampscope::cli {

// While it lives, SIGINT is noted (interrupted()) rather than ending the CLI.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  // Ctrl-C came since the guard was made.
  static bool interrupted();

 private:
  void (*previous_)(int) = nullptr;
};

// Runs `args` (the program first, found on PATH) and waits for it: its exit status, or 128 +
// the signal that ended it. Its output goes to `log` (stdout and stderr, truncated) or, without
// one, where the CLI's goes. Throws engine::ConfigError when it cannot be started.
int run_child(const std::vector<std::string>& args, const std::optional<std::filesystem::path>& log = std::nullopt);

}  // namespace ampscope::cli
