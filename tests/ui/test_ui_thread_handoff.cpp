// The GUI's hand-overs between threads (ui/widgets/thread_handoff.h): jobs on one
// worker in order, results back on the GUI thread in order, nothing delivered to
// a receiver that is gone. `scripts/sanitize.sh tsan` runs this under TSan too.
#include <gtest/gtest.h>

#include <QCoreApplication>
#include <atomic>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "tests/ui/qt_test_env.h"
#include "ui/widgets/thread_handoff.h"

namespace ampscope::ui {
namespace {

TEST(SerialWorker, RunsJobsOneAtATimeInTheOrderGivenOnAThreadOfItsOwn) {
  SerialWorker worker;
  std::vector<int> order;  // no lock: only the jobs touch it, one at a time, until waitForDone()
  std::set<std::thread::id> threads;
  for (int i = 0; i < 200; ++i)
    worker.run([&order, &threads, i] {
      order.push_back(i);
      threads.insert(std::this_thread::get_id());
    });
  worker.waitForDone();
  ASSERT_EQ(order.size(), 200u);
  for (int i = 0; i < 200; ++i) ASSERT_EQ(order[static_cast<size_t>(i)], i);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_NE(*threads.begin(), std::this_thread::get_id());
}

TEST(SerialWorker, GoingAwayFinishesTheJobsAlreadyGiven) {
  std::atomic<int> ran{0};
  {
    SerialWorker worker;
    for (int i = 0; i < 50; ++i) worker.run([&ran] { ran.fetch_add(1); });
  }
  EXPECT_EQ(ran.load(), 50);
}

TEST(GuiThreadInbox, DeliversOnTheGuiThreadInTheOrderGivenByAWorker) {
  GuiThreadInbox inbox;
  std::vector<int> order;  // GUI thread only
  std::set<std::thread::id> threads;
  std::thread worker([&] {
    for (int i = 0; i < 300; ++i)
      inbox.deliver([&order, &threads, i] {
        order.push_back(i);
        threads.insert(std::this_thread::get_id());
      });
  });
  worker.join();
  ASSERT_TRUE(testing::waitUntil([&] { return order.size() == 300; }));
  for (int i = 0; i < 300; ++i) ASSERT_EQ(order[static_cast<size_t>(i)], i);
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(GuiThreadInbox, WhatIsStillPendingWhenItGoesIsDropped) {
  auto inbox = std::make_unique<GuiThreadInbox>();
  bool called = false;
  std::thread worker([&] { inbox->deliver([&called] { called = true; }); });
  worker.join();
  inbox.reset();
  QCoreApplication::processEvents();  // the queued call, to a receiver that is gone
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace ampscope::ui
