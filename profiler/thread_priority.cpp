#include "profiler/thread_priority.h"

#if defined(__linux__)
#include <pthread.h>
#include <sys/resource.h>
#include <cerrno>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace ampscope::profiler {

void lower_this_thread_priority() {
#if defined(__linux__)
  // On Linux a nice value set through the thread id applies to that thread alone.
  // Relative to the thread's own value: a process started under `nice` stays below it.
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int current = getpriority(PRIO_PROCESS, tid);
  if (errno != 0) return;
  (void)setpriority(PRIO_PROCESS, tid, current + 10 > 19 ? 19 : current + 10);
#endif
}

void name_thread(std::thread& thread, const char* name) {
#if defined(__linux__)
  (void)pthread_setname_np(thread.native_handle(), name);  // ERANGE past 15 characters: left unnamed
#else
  (void)thread;
  (void)name;
#endif
}

}  // namespace ampscope::profiler
