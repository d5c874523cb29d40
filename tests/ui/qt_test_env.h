#pragma once
// One QApplication per test program, on the offscreen platform so the tests run
// without a display. Included by each tests/ui/test_*.cpp (one per executable).
#include <gtest/gtest.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QStandardPaths>
#include <QThread>
#include <chrono>
#include <functional>
#include <memory>

namespace ampscope::ui::testing {

class QtEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QStandardPaths::setTestModeEnabled(true);  // QSettings stay out of the user's config
    app_ = std::make_unique<QApplication>(argc_, argv_);
    QApplication::setOrganizationName(QStringLiteral("ampscope-tests"));
  }
  void TearDown() override { app_.reset(); }

 private:
  int argc_ = 1;
  char name_[16] = "ampscope-tests";
  char* argv_[2] = {name_, nullptr};
  std::unique_ptr<QApplication> app_;
};

// Processes events until `done` holds or the timeout passes; returns done().
inline bool waitUntil(const std::function<bool()>& done,
                      std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  QElapsedTimer timer;
  timer.start();
  while (!done()) {
    if (timer.elapsed() > timeout.count()) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(2);
  }
  return true;
}

// Processes events for a while, whatever happens.
inline void spinFor(std::chrono::milliseconds duration) {
  waitUntil([] { return false; }, duration);
}

inline ::testing::Environment* const kQtEnvironment =
    ::testing::AddGlobalTestEnvironment(new QtEnvironment);

}  // namespace ampscope::ui::testing
