// The profiler's threads step back for training: lower_this_thread_priority()
// lowers only the calling thread, so the training thread keeps its priority.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "profiler/thread_priority.h"

namespace ampscope::profiler {
namespace {

int nice_of_this_thread() {
  errno = 0;
  return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
}

TEST(ThreadPriority, LowersOnlyTheCallingThread) {
  const int before = nice_of_this_thread();
  int worker_nice = before;
  std::thread worker([&] {
    lower_this_thread_priority();
    worker_nice = nice_of_this_thread();
  });
  worker.join();
  EXPECT_EQ(worker_nice, std::min(before + 10, 19));
  EXPECT_EQ(nice_of_this_thread(), before);
}

}  // namespace
}  // namespace ampscope::profiler
