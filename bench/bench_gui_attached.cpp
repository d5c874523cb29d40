// Does the GUI slow training down? The same run (ampscope-ui's built-in
// session: MLP 3x256, batch 64, bf16, CPU, profiler off) with the window
// attached (events drained and plotted at 30 Hz on the GUI thread) and with a
// plain consumer thread as the CLI has, alternating A/B/A/B in one process.
// Prints the median step time of each and their ratio (goal <= 1.02).
// Usage: bench_gui_attached [steps per run, default 400] [pairs, default 3]
#include "engine/trainer.h"
// Qt after LibTorch-using headers.
#include <QApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "ui/models/run_series.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/run_panel.h"
#include "ui/widgets/training_controller.h"

namespace {

using namespace ampscope;

engine::TrainConfig session(int64_t steps) {
  engine::TrainConfig c;
  c.model.kind = engine::ModelKind::kMLP;
  c.model.layers = 3;
  c.model.width = 256;
  c.precision = engine::Precision::kBF16;
  c.device = engine::DeviceChoice::kCPU;
  c.batch_size = 64;
  c.steps = steps;
  return c;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Step times of a run whose events a plain thread drains, as `ampscope train` does.
std::vector<double> cli_run(int64_t steps) {
  engine::Trainer trainer(session(steps));
  auto queue = trainer.subscribe(16384);
  trainer.start();
  std::vector<double> times;
  std::vector<engine::Event> events;
  while (true) {
    queue->wait_for(std::chrono::milliseconds(100));
    events.clear();
    queue->drain(events);
    bool done = false;
    for (const auto& e : events) {
      if (const auto* s = std::get_if<engine::StepEvent>(&e)) times.push_back(s->step_time_ms);
      if (const auto* s = std::get_if<engine::StateEvent>(&e)) done = done || engine::is_terminal(s->state);
    }
    if (done) break;
  }
  trainer.wait();
  return times;
}

std::vector<double> gui_run(ui::MainWindow& window, int64_t steps) {
  window.runPanel()->setConfig(session(steps));
  window.startRun();
  ui::TrainingController* controller = window.controller();
  QElapsedTimer timer;
  timer.start();
  while (!engine::is_terminal(controller->state()) || controller->series().size() < steps) {
    QApplication::processEvents(QEventLoop::AllEvents, 20);
    if (timer.elapsed() > 10 * 60 * 1000) break;
  }
  const auto& t = controller->series().stepTimeMs();
  return {t.begin(), t.end()};
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  const int64_t steps = argc > 1 ? std::atoll(argv[1]) : 400;
  const int pairs = argc > 2 ? std::atoi(argv[2]) : 3;
  QApplication app(argc, argv);
  ui::MainWindow window(ui::MainWindow::Options{.restore_layout = false});
  window.resize(1600, 1000);
  window.show();
  std::vector<double> cli, gui;
  for (int i = 0; i < pairs; ++i) {
    // The first steps of each run warm the allocator and kernels: leave out 10.
    auto c = cli_run(steps);
    auto g = gui_run(window, steps);
    cli.insert(cli.end(), c.begin() + std::min<size_t>(10, c.size()), c.end());
    gui.insert(gui.end(), g.begin() + std::min<size_t>(10, g.size()), g.end());
  }
  const double m_cli = median(cli), m_gui = median(gui);
  std::printf("steps measured: CLI %zu, GUI %zu\n", cli.size(), gui.size());
  std::printf("median step: CLI %.3f ms, GUI attached %.3f ms, ratio %.3f\n", m_cli, m_gui, m_gui / m_cli);
  window.controller()->shutdown();
  return 0;
}
