#pragma once
// Work handed from the GUI thread to a worker and results handed back, through
// locks ThreadSanitizer can see.
//
// Why not QThreadPool::start(closure) and a queued QMetaObject::invokeMethod(closure):
// Debian's Qt is not built with ThreadSanitizer and Qt 6's QMutex is a bare futex,
// so TSan sees no order between the thread that built a closure and the thread
// that runs it, and reports the closure's own captures as racing (the GUI tests
// under `scripts/sanitize.sh tsan` did, in FileLoader). Here each hand-over goes
// through a std::mutex; the only thing that crosses through Qt is a queued call
// of a slot by name, which carries nothing.
//
// Lock order: none is held while a job or a delivery runs, so neither can take
// the other's lock while holding its own.
#include <QObject>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ampscope::ui {

// Runs jobs one at a time, in the order given, on a thread of its own.
class SerialWorker {
 public:
  SerialWorker();
  ~SerialWorker();  // finishes the jobs already given, then joins
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  void run(std::function<void()> job);
  // Returns when every job given so far has finished.
  void waitForDone();

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> jobs_;
  bool busy_ = false;     // a job is running
  bool closing_ = false;  // the destructor: finish the queue and end
  std::thread thread_;    // last: started once the members above exist
};

// Calls functions on the GUI thread (the thread this object lives in), in the
// order given from any one thread. Deliveries still pending when it is destroyed
// are dropped, as Qt drops queued calls to a destroyed receiver.
class GuiThreadInbox : public QObject {
  Q_OBJECT
 public:
  explicit GuiThreadInbox(QObject* parent = nullptr) : QObject(parent) {}

  // Any thread.
  void deliver(std::function<void()> call);

 private:
  Q_INVOKABLE void deliverPending();

  std::mutex mutex_;
  std::vector<std::function<void()>> pending_;
};

}  // namespace ampscope::ui
