#pragma once
// The window reads files and writes reports off the GUI thread: these start one
// and process events until its outcome signal arrives (waiting on the outcome,
// never on time; the timeout only bounds a failure).
#include <QObject>
#include <QString>
#include <chrono>
#include <optional>

#include <QGroupBox>
#include <QLabel>
#include <QStringList>

#include "tests/ui/qt_test_env.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/run_panel.h"

namespace ampscope::ui::testing {

// Starts a job with `start` and waits for `outcome(path, ok)` of that path.
template <typename Start>
bool startAndWait(MainWindow& window, void (MainWindow::*outcome_signal)(const QString&, bool), const QString& path,
                  Start start) {
  std::optional<bool> outcome;
  const auto connection = QObject::connect(&window, outcome_signal, [&](const QString& done, bool ok) {
    if (done == path) outcome = ok;
  });
  const bool started = start();
  if (started) waitUntil([&] { return outcome.has_value(); }, std::chrono::minutes(2));
  QObject::disconnect(connection);
  return started && outcome.value_or(false);
}

// false when the open could not start or the file could not be shown (the banner says why).
inline bool openAndWait(MainWindow& window, const QString& path) {
  return startAndWait(window, &MainWindow::fileOpened, path, [&] { return window.openSession(path); });
}

inline bool exportReportAndWait(MainWindow& window, const QString& path) {
  return startAndWait(window, &MainWindow::reportExported, path, [&] { return window.exportReport(path); });
}

// The Run panel's facts of a script's session, "label | value | ..." ("" when it shows none).
inline QString scriptFactsText(MainWindow& window) {
  QStringList texts;
  if (auto* box = window.runPanel()->findChild<QGroupBox*>(QStringLiteral("scriptFacts")))
    for (const QLabel* label : box->findChildren<QLabel*>()) texts << label->text();
  return texts.join(QStringLiteral(" | "));
}

}  // namespace ampscope::ui::testing
