#include "ui/widgets/run_findings.h"

#include <QTimer>
#include <algorithm>
#include <utility>

#include "ui/widgets/file_loader.h"
#include "ui/widgets/findings_pane.h"

namespace ampscope::ui {

RunFindings::RunFindings(FileLoader* loader, FindingsPane* pane, std::function<std::string()> shown_session,
                         std::function<bool()> run_active, QObject* parent)
    : QObject(parent),
      loader_(loader),
      pane_(pane),
      shown_session_(std::move(shown_session)),
      run_active_(std::move(run_active)) {
  timer_ = new QTimer(this);
  timer_->setInterval(kIntervalMs);
  connect(timer_, &QTimer::timeout, this, &RunFindings::readSoFar);
  connect(loader_, &FileLoader::findingsRead, this,
          [this](const QString& path, const FindingsPtr& read, bool so_far) {
            if (so_far) readDone();
            if (!stillShown(path, so_far)) return;
            pane_->setFindings(read->findings,
                               so_far ? tr("So far, through step %1: the run goes on, and its findings are read "
                                           "again from its session every few seconds.")
                                            .arg(read->last_step)
                                      : QString());
          });
  connect(loader_, &FileLoader::findingsFailed, this, [this](const QString& path, const QString& why, bool so_far) {
    if (so_far) return readDone();  // a read while the writer checkpoints can fail: the next is seconds away
    if (stillShown(path, false)) pane_->showNote(tr("No findings: %1").arg(why));
  });
}

void RunFindings::setInterval(int ms) {
  base_interval_ = ms;
  timer_->setInterval(ms);
}

int RunFindings::interval() const { return timer_->interval(); }

void RunFindings::readDone() {
  pending_ = false;
  const qint64 took = reading_.elapsed();
  timer_->setInterval(static_cast<int>(std::max<qint64>(base_interval_, took * kIdleFactor)));
}

void RunFindings::runStarted() {
  pane_->showNote(tr("The run's findings (the report's verdict and what to change) are read from its session "
                     "as it is written, every few seconds, and whole when it ends."));
  following_ = true;
  pending_ = false;
  timer_->start(base_interval_);
}

void RunFindings::runEnded() {
  if (!following_) return;
  following_ = false;
  timer_->stop();
  const std::string written = shown_session_();
  if (written.empty()) return pane_->showNote(tr("No findings: the run wrote no session"));
  loader_->readFindings(QString::fromStdString(written), false);
}

void RunFindings::comparisonStarted() {
  pane_->showNote(tr("The comparison's findings (its verdict and each reduced precision's recommendations) "
                     "come as its runs end."));
}

void RunFindings::comparisonResults(const ComparisonResultsPtr& results) {
  if (!results || !results->report.comparison) return;
  pane_->setFindings(profiler::comparison_findings(results->report),
                     results->complete ? QString()
                                       : tr("So far: the comparison goes on, and these are of the runs that ended."));
}

void RunFindings::readSoFar() {
  const std::string path = shown_session_();
  // One read at a time: a slow read (a large session) is not queued behind itself.
  if (pending_ || path.empty() || !run_active_()) return;
  pending_ = true;
  reading_.start();
  loader_->readFindings(QString::fromStdString(path), true);
}

// Shown unless another run or file took the window while they were read; a read made while the
// run went on only while it still goes on (the whole run's read comes after it).
bool RunFindings::stillShown(const QString& path, bool so_far) const {
  const bool current = so_far ? following_ && run_active_() : !run_active_();
  return current && QString::fromStdString(shown_session_()) == path;
}

}  // namespace ampscope::ui
