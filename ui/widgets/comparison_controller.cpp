#include "ui/widgets/comparison_controller.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace ampscope::ui {

ComparisonResultsPtr makeComparisonResults(profiler::Comparison comparison, const QString& path, bool complete) {
  auto results = std::make_shared<ComparisonResults>();
  results->report = profiler::comparison_report(std::move(comparison), path.toStdString());
  results->path = path;
  results->complete = complete;
  return results;
}

double ComparisonProgressInfo::fraction() const {
  if (run_count <= 0) return 0.0;
  const double within = steps > 0 ? static_cast<double>(step) / static_cast<double>(steps) : 0.0;
  const double runs = finished_message.isEmpty() ? static_cast<double>(run_index) + within
                                                 : static_cast<double>(run_index + 1);
  return std::clamp(runs / static_cast<double>(run_count), 0.0, 1.0);
}

ComparisonController::ComparisonController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<ComparisonProgressInfo>();
  qRegisterMetaType<ComparisonResultsPtr>();
}

ComparisonController::~ComparisonController() {
  // No signals from here: the receivers may be half destroyed already.
  stop();
  joinWorker();
  ++generation_;
}

template <typename F>
void ComparisonController::post(uint64_t generation, F&& f) {
  // The inbox is a member: what it still holds when the controller goes is dropped.
  inbox_.deliver([this, generation, f = std::forward<F>(f)]() mutable {
    if (generation == generation_) f();
  });
}

bool ComparisonController::start(profiler::ComparisonOptions options) {
  if (active_) {
    emit failed(tr("a comparison is already running; stop it first"));
    return false;
  }
  joinWorker();
  const uint64_t generation = ++generation_;
  const QString path = QString::fromStdString(options.out_path);
  auto runner = std::make_shared<profiler::ComparisonRunner>(std::move(options));
  runner_ = runner;
  active_ = true;
  results_.reset();
  emit started(path);
  worker_ = std::thread([this, runner, generation, path] {
    using Clock = std::chrono::steady_clock;
    auto last_post = Clock::now() - std::chrono::hours(1);
    try {
      profiler::Comparison comparison = runner->run([&](const profiler::ComparisonProgress& p) {
        if (p.so_far) {
          ComparisonResultsPtr partial = makeComparisonResults(*p.so_far, path, false);
          post(generation, [this, partial] {
            results_ = partial;
            emit resultsChanged(partial);
          });
        }
        const auto now = Clock::now();
        const bool last_step = p.steps > 0 && p.step == p.steps;
        if (p.finished_message.empty() && !last_step &&
            now - last_post < std::chrono::milliseconds(kProgressIntervalMs))
          return;
        last_post = now;
        ComparisonProgressInfo info;
        info.variant = QString::fromStdString(p.variant);
        info.repeat = p.repeat;
        info.run_index = p.run_index;
        info.run_count = p.run_count;
        info.step = p.step;
        info.steps = p.steps;
        info.loss = p.loss;
        info.finished_message = QString::fromStdString(p.finished_message);
        post(generation, [this, info] { emit progress(info); });
      });
      ComparisonResultsPtr results = makeComparisonResults(std::move(comparison), path, true);
      const bool stopped = runner->stopped();
      post(generation, [this, results, stopped] {
        joinWorker();
        active_ = false;
        results_ = results;
        emit resultsChanged(results);
        emit finished(stopped);
      });
    } catch (const std::exception& e) {
      const QString message = QString::fromUtf8(e.what());
      post(generation, [this, message] {
        joinWorker();
        active_ = false;
        emit failed(message);
      });
    }
  });
  return true;
}

void ComparisonController::stop() {
  if (runner_) runner_->request_stop();
}

void ComparisonController::shutdown() {
  stop();
  joinWorker();
  if (active_) {
    // The worker's last posts are still queued: drop them, they are of this generation.
    ++generation_;
    active_ = false;
    emit finished(true);
  }
}

void ComparisonController::joinWorker() {
  if (worker_.joinable() && worker_.get_id() != std::this_thread::get_id()) worker_.join();
}

}  // namespace ampscope::ui
