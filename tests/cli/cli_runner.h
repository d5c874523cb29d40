#pragma once
// Runs the built `ampscope` (AMPSCOPE_CLI, set per test target) as a user would.
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "tests/support/test_support.h"
#include "tests/support/wait_until.h"

extern char** environ;

namespace ampscope::test {

struct CliResult {
  int exit_code;
  std::string output;  // stdout and stderr together
};

inline CliResult ampscope(const std::string& args) {
  CliResult r;
  r.exit_code = run_command(fmt::format("'{}' {} 2>&1", AMPSCOPE_CLI, args), &r.output);
  return r;
}

// Checks `done` until it holds; false once `bound` passed (tests/support/wait_until.h).
inline bool wait_for_condition(const std::function<bool()>& done,
                               std::chrono::seconds bound = std::chrono::seconds(120)) {
  // Checks read files and processes: every 20 ms is often enough and leaves the CPU to the run.
  return wait_until(done, bound, std::chrono::milliseconds(20));
}

// `ampscope ARGS` running in the background, its output going to `log`.
class BackgroundCli {
 public:
  BackgroundCli(const std::string& args, const std::filesystem::path& log) {
    const std::string command = fmt::format("exec '{}' {} >'{}' 2>&1", AMPSCOPE_CLI, args, log.string());
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    if (posix_spawn(&pid_, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0) pid_ = -1;
  }
  ~BackgroundCli() {
    if (pid_ > 0 && !exit_code_) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  BackgroundCli(const BackgroundCli&) = delete;
  BackgroundCli& operator=(const BackgroundCli&) = delete;

  bool started() const { return pid_ > 0; }
  bool signal(int sig) const { return pid_ > 0 && ::kill(pid_, sig) == 0; }
  // Its exit code (128 + N for signal N) once it ended; nullopt if it has not ended within `bound`.
  std::optional<int> wait_exit(std::chrono::seconds bound = std::chrono::seconds(120)) {
    wait_for_condition([&] { return reap(); }, bound);
    return exit_code_;
  }

 private:
  bool reap() {
    if (exit_code_) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
  }
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

}  // namespace ampscope::test
