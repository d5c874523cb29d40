#include "ui/widgets/session_follower.h"

#include <QFileInfo>

#include "profiler/process_identity.h"

namespace ampscope::ui {

SessionFollower::SessionFollower(QObject* parent) : QObject(parent) {
  timer_.setInterval(kPollIntervalMs);
  connect(&timer_, &QTimer::timeout, this, &SessionFollower::poll);
}

SessionFollower::Signature SessionFollower::signatureOf(const QString& path) {
  const QFileInfo file(path), wal(path + QStringLiteral("-wal"));
  Signature s;
  if (file.exists()) {
    s.size = file.size();
    s.modified = file.lastModified();
  }
  if (wal.exists()) {
    s.wal_size = wal.size();
    s.wal_modified = wal.lastModified();
  }
  return s;
}

void SessionFollower::follow(const QString& path, bool closed, int64_t writer_pid, const QString& writer_host) {
  stop();
  if (closed) return;  // its run ended: nothing will change
  writer_pid_ = writer_pid;
  writer_checkable_ = writer_pid > 0 && !writer_host.isEmpty() && writer_host == QString::fromStdString(profiler::current_host_name());
  if (writer_checkable_ && !profiler::process_runs(writer_pid)) {
    setStatus(tr("not live: the process that wrote it (pid %1) is gone without closing it; it was killed or crashed")
                  .arg(writer_pid));
    return;
  }
  path_ = path;
  seen_ = signatureOf(path);
  setStatus(writer_checkable_ ? tr("live: following the run of pid %1 as it writes").arg(writer_pid)
                              : tr("watching: the session was not closed; it refreshes if its writer still adds to it"));
  timer_.start();
}

void SessionFollower::reloaded(const QString& path, bool closed) {
  if (path != path_) return;
  reload_pending_ = false;
  if (!closed) return;
  stop();
  setStatus(tr("the followed run ended; the session is complete"));
}

void SessionFollower::stop() {
  timer_.stop();
  path_.clear();
  reload_pending_ = false;
  setStatus({});
}

void SessionFollower::poll() {
  if (path_.isEmpty() || reload_pending_) return;
  if (const Signature now = signatureOf(path_); !(now == seen_)) {
    // Read after the change was seen: a write after this poll shows at the next.
    seen_ = now;
    reload_pending_ = true;
    emit reloadWanted(path_);
    return;
  }
  // Unchanged since the last read: if its writer is gone now, what was read is all there is.
  if (writer_checkable_ && !profiler::process_runs(writer_pid_)) {
    const int64_t pid = writer_pid_;
    stop();
    setStatus(tr("not live: the process that wrote it (pid %1) is gone without closing it; it was killed or crashed")
                  .arg(pid));
  }
}

void SessionFollower::setStatus(const QString& text) {
  if (text == status_) return;
  status_ = text;
  emit statusChanged(status_);
}

}  // namespace ampscope::ui
