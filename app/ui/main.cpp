// ampscope-ui: the desktop app. With no arguments it opens ready to run a
// built-in session that needs no GPU and no files (an MLP on a synthetic task,
// bf16 autocast, device auto). --screenshot runs it (or loads FILE), grabs the
// window and exits, for docs and CI.
// LibTorch before Qt: Qt's `slots`/`signals` macros break LibTorch's headers.
#include "engine/config.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QTimer>
#include <cstdio>
#include <memory>

#include "ui/models/run_series.h"
#include "ui/models/store_session_io.h"
#include "ui/widgets/color_scheme.h"
#include "ui/widgets/live_plots.h"
#include "ui/widgets/live_profiling.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/run_panel.h"
#include "ui/widgets/script_run_dialog.h"
#include "ui/widgets/script_runner.h"
#include "ui/widgets/session_follower.h"
#include "ui/widgets/training_controller.h"

namespace {

using ampscope::engine::RunState;
using ampscope::engine::TrainConfig;
using ampscope::ui::MainWindow;
using ampscope::ui::TrainingController;

TrainConfig defaultSession(int64_t steps) {
  TrainConfig c;
  c.model.kind = ampscope::engine::ModelKind::kMLP;
  c.model.layers = 3;
  c.model.width = 256;
  c.data.kind = ampscope::engine::DataKind::kSynthetic;
  c.precision = ampscope::engine::Precision::kBF16;
  c.device = ampscope::engine::DeviceChoice::kAuto;
  c.batch_size = 64;
  c.optim.kind = ampscope::engine::OptimizerKind::kAdamW;
  c.optim.lr = 2e-3;
  c.optim.schedule = ampscope::engine::ScheduleKind::kCosine;
  c.optim.warmup_steps = std::min<int64_t>(20, steps / 10);
  c.steps = steps;
  return c;
}

int fail(const QString& message) {
  std::fprintf(stderr, "ampscope-ui: error: %s\n", qPrintable(message));
  return 1;
}

// Grabs the window into `path`: 0, or 1 with the reason on stderr.
int saveGrab(MainWindow& window, const QString& path) {
  if (!window.grab().save(path)) return fail(QStringLiteral("could not write %1").arg(path));
  std::printf("ampscope-ui: wrote %s\n", qPrintable(path));
  return 0;
}

// Runs the event loop until the window is grabbed into `path` after `after_steps`
// steps (or right after loading a session); returns the exit code.
int runScreenshot(QApplication& app, MainWindow& window, const QString& path, int after_steps,
                  bool from_session) {
  TrainingController* controller = window.controller();
  bool grabbed = false;
  int code = 1;
  auto grab_and_quit = [&] {
    if (grabbed) return;
    grabbed = true;
    // Pausing holds the picture at the step asked for; a few event-loop passes
    // then let the last steps, the queued replots and the status bar catch up.
    controller->pause();
    QTimer::singleShot(300, &window, [&] {
      code = saveGrab(window, path);
      controller->shutdown();
      app.exit(code);
    });
  };
  if (from_session) {
    // The file is read off the GUI thread: grab once it is shown.
    QObject::connect(&window, &MainWindow::fileOpened, &window, [&](const QString& file, bool ok) {
      if (ok) return grab_and_quit();
      grabbed = true;
      code = fail(window.bannerText().isEmpty() ? QStringLiteral("cannot open %1").arg(file) : window.bannerText());
      app.exit(code);
    });
  } else {
    QObject::connect(controller, &TrainingController::stepsAppended, &window, [&] {
      if (controller->series().size() >= after_steps) grab_and_quit();
    });
    QObject::connect(
        controller, &TrainingController::stateChanged, &window,
        [&](RunState state, const QString& message) {
          if (grabbed || !ampscope::engine::is_terminal(state)) return;
          grabbed = true;
          code = fail(state == RunState::kFailed
                          ? message
                          : QStringLiteral("the run ended before step %1").arg(after_steps));
          app.exit(code);
        });
    window.startRun();
  }
  QTimer::singleShot(10 * 60 * 1000, &app, [&] {
    if (grabbed) return;
    grabbed = true;
    code = fail(QStringLiteral("timed out waiting for step %1").arg(after_steps));
    controller->shutdown();
    app.exit(code);
  });
  const int loop = app.exec();
  return loop != 0 ? loop : code;
}

// --script with --screenshot: grabs the window once the script's session shows
// `after_steps` steps, or once the script has ended and its session is read.
int runScriptScreenshot(QApplication& app, MainWindow& window, const QString& path, int after_steps) {
  int code = 1;
  bool ended = false, ok = false;
  QObject::connect(window.scriptRunner(), &ampscope::ui::ScriptRunner::finished, &window,
                   [&](bool finished_ok, const QString&) {
                     ended = true;
                     ok = finished_ok;
                   });
  QTimer poll;
  QObject::connect(&poll, &QTimer::timeout, &window, [&] {
    const bool shown = window.livePlots()->graph(ampscope::ui::LivePlots::kLoss, 0)->dataCount() >= after_steps;
    const bool read = ended && !window.sessionFollower()->isFollowing() && !window.fileLoader()->isBusy();
    if (!shown && !read) return;
    poll.stop();
    code = saveGrab(window, path);
    if (shown || ok) return app.exit(code);
    app.exit(fail(window.bannerText()));
  });
  poll.start(200);
  return app.exec() != 0 ? 1 : code;
}

void describeApp() {
  QCoreApplication::setOrganizationName(QStringLiteral("ampscope"));
  QCoreApplication::setApplicationName(QStringLiteral("ampscope-ui"));
  QCoreApplication::setApplicationVersion(QStringLiteral("0.1.0"));
}

bool wantsHelpOnly(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const QByteArray a(argv[i]);
    if (a == "-h" || a == "--help" || a == "-v" || a == "--version" || a == "--help-all")
      return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // --help must work without a display, so it gets no QApplication.
  std::unique_ptr<QCoreApplication> app_holder;
  if (wantsHelpOnly(argc, argv))
    app_holder = std::make_unique<QCoreApplication>(argc, argv);
  else
    app_holder = std::make_unique<QApplication>(argc, argv);
  describeApp();

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("See what mixed-precision training actually did."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("FILE"),
                               QStringLiteral("A session or comparison (.ampscope) to open; several: the "
                                              "ranks of a distributed run (FILE.rank<R>.ampscope), compared"),
                               QStringLiteral("[FILE...]"));
  QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                QStringLiteral("Grab the window into FILE.png and exit"),
                                QStringLiteral("FILE.png"));
  QCommandLineOption steps(QStringLiteral("steps"),
                           QStringLiteral("Steps of the built-in session (default 300)"),
                           QStringLiteral("N"), QStringLiteral("300"));
  QCommandLineOption after(QStringLiteral("screenshot-after-steps"),
                           QStringLiteral("With --screenshot: grab after N steps (default 40)"),
                           QStringLiteral("N"), QStringLiteral("40"));
  QCommandLineOption start(QStringLiteral("start"),
                           QStringLiteral("Start the built-in session at once"));
  QCommandLineOption script(QStringLiteral("script"),
                            QStringLiteral("Run this Python training script under capture (ampscope run) and follow "
                                           "its session live; the script's arguments follow --"),
                            QStringLiteral("SCRIPT.py"));
  QCommandLineOption module(QStringLiteral("module"),
                            QStringLiteral("The same for a module, run as python -m MODULE runs it, from this "
                                           "directory"),
                            QStringLiteral("MODULE"));
  QCommandLineOption compare(QStringLiteral("compare"),
                             QStringLiteral("With --script or --module: compare these precisions of it (ampscope run "
                                            "--compare) instead of profiling one run; the page fills in as runs end"),
                             QStringLiteral("fp32,bf16,..."));
  QCommandLineOption nproc(QStringLiteral("nproc-per-node"),
                           QStringLiteral("With --script or --module: run N ranks of it under torchrun on this machine "
                                          "(ampscope run --nproc-per-node N); the Ranks page opens when they end"),
                           QStringLiteral("N"));
  QCommandLineOption scheme(QStringLiteral("color-scheme"),
                            QStringLiteral("light, dark or system (default: the desktop's palette)"),
                            QStringLiteral("SCHEME"), QStringLiteral("system"));
  parser.addOptions({screenshot, steps, after, start, script, module, compare, nproc, scheme});
  parser.process(*app_holder);
  auto& app = static_cast<QApplication&>(*app_holder);

  bool ok_steps = false, ok_after = false;
  const int n_steps = parser.value(steps).toInt(&ok_steps);
  const int n_after = parser.value(after).toInt(&ok_after);
  if (!ok_steps || n_steps < 1) return fail(QStringLiteral("--steps wants a positive number"));
  if (!ok_after || n_after < 1)
    return fail(QStringLiteral("--screenshot-after-steps wants a positive number"));
  if (!ampscope::ui::applyColorScheme(parser.value(scheme)))
    return fail(QStringLiteral("--color-scheme wants light, dark or system"));
  const QStringList files = parser.positionalArguments();
  const QString file = files.value(0);
  const bool shooting = parser.isSet(screenshot);

  ampscope::ui::StoreSessionIO session_io;
  MainWindow window(MainWindow::Options{.restore_layout = !shooting});
  window.setSessionIO(&session_io);
  ampscope::ui::LiveProfiling live_profiling(*window.controller(), *window.runPanel(), session_io,
                                             ampscope::ui::defaultSessionsDirectory());
  // A screenshot needs enough steps to reach the grab, with some left to show a live run.
  window.runPanel()->setConfig(defaultSession(shooting ? std::max(n_steps, n_after * 2) : n_steps));
  window.show();

  if (parser.isSet(script) && parser.isSet(module))
    return fail(QStringLiteral("--script or --module: one of them, not both"));
  if (parser.isSet(compare) && !parser.isSet(script) && !parser.isSet(module))
    return fail(QStringLiteral("--compare compares a script's precisions: name it with --script or --module"));
  bool ok_nproc = true;
  const int n_proc = parser.isSet(nproc) ? parser.value(nproc).toInt(&ok_nproc) : 0;
  if (parser.isSet(nproc) && (!ok_nproc || n_proc < 1 || (!parser.isSet(script) && !parser.isSet(module))))
    return fail(
        QStringLiteral("--nproc-per-node wants a positive number of ranks, and a script (--script or --module)"));
  if (parser.isSet(script) || parser.isSet(module)) {
    ampscope::ui::ScriptRunRequest request;
    request.module = parser.isSet(module);
    request.script = request.module ? parser.value(module) : parser.value(script);
    if (request.module) request.working_dir = QDir::currentPath();
    request.arguments = files;  // after --
    if (parser.isSet(compare)) request.compare = parser.value(compare).split(QLatin1Char(','), Qt::SkipEmptyParts);
    request.nproc_per_node = n_proc;
    request.session_path =
        ampscope::ui::ScriptRunDialog::defaultSessionPath(request.script, request.comparing());
    if (!window.runScript(request)) return fail(window.bannerText());
    if (shooting) return runScriptScreenshot(app, window, parser.value(screenshot), n_after);
    return app.exec();
  }
  if (!files.isEmpty() && !window.openSessions(files) && shooting)
    return fail(window.bannerText().isEmpty() ? QStringLiteral("cannot open %1").arg(file)
                                              : window.bannerText());
  if (shooting)
    return runScreenshot(app, window, parser.value(screenshot), n_after, !file.isEmpty());
  if (parser.isSet(start) && file.isEmpty()) window.startRun();
  return app.exec();
}
