#include "ui/widgets/thread_handoff.h"

#include <QMetaObject>
#include <utility>

namespace ampscope::ui {

SerialWorker::SerialWorker() : thread_([this] { loop(); }) {}

SerialWorker::~SerialWorker() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void SerialWorker::run(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  changed_.notify_all();
}

void SerialWorker::waitForDone() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return jobs_.empty() && !busy_; });
}

void SerialWorker::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return !jobs_.empty() || closing_; });
    if (jobs_.empty()) return;  // closing, and nothing left to do
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    lock.unlock();
    job();  // the jobs catch their own errors: a throw here would end the program, as in a QRunnable
    job = nullptr;  // its captures go on this thread, before waitForDone() can return
    lock.lock();
    busy_ = false;
    changed_.notify_all();
  }
}

void GuiThreadInbox::deliver(std::function<void()> call) {
  {
    std::lock_guard lock(mutex_);
    pending_.push_back(std::move(call));
  }
  // By name: Qt builds the queued call itself, so nothing of ours crosses through
  // its (to TSan invisible) event-queue lock. One call may find several pending,
  // a later one none.
  QMetaObject::invokeMethod(this, "deliverPending", Qt::QueuedConnection);
}

void GuiThreadInbox::deliverPending() {
  std::vector<std::function<void()>> ready;
  {
    std::lock_guard lock(mutex_);
    ready.swap(pending_);
  }
  for (auto& call : ready) call();
}

}  // namespace ampscope::ui
