#include "profiler/process_identity.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>

namespace ampscope::profiler {

int64_t current_process_id() { return static_cast<int64_t>(::getpid()); }

std::string current_host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  return name;
}

bool process_runs(int64_t pid) {
  if (pid <= 0 || pid > INT32_MAX) return false;
  // Signal 0 checks existence only; EPERM: it runs, under another user.
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

bool writer_runs(int64_t pid, const std::string& host) {
  return pid > 0 && !host.empty() && host == current_host_name() && process_runs(pid);
}

}  // namespace ampscope::profiler
