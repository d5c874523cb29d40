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

QString SessionFollower::writerGoneText(int64_t pid) {
  return tr("not live: the process that wrote it (pid %1) is gone without closing it; it was killed or crashed")
      .arg(pid);
}

void SessionFollower::follow(const QString& path, bool closed, int64_t writer_pid, const QString& writer_host) {
  stop();
  if (closed) return;  // its run ended: nothing will change
  writer_pid_ = writer_pid;
  writer_checkable_ = writer_pid > 0 && !writer_host.isEmpty() && writer_host == QString::fromStdString(profiler::current_host_name());
  path_ = path;
  seen_ = signatureOf(path);
  const bool writer_gone = writer_checkable_ && !profiler::process_runs(writer_pid);
  if (writer_gone)
    setStatus(writerGoneText(writer_pid));
  else
    setStatus(writer_checkable_ ? tr("live: following the run of pid %1 as it writes").arg(writer_pid)
                                : tr("watching: the session was not closed; it refreshes if its writer still adds "
                                     "to it"));
  if (!writer_gone) timer_.start();
  // What the writer added between the read that showed the file and now (a short run may even
  // have closed it and ended since) changes no signature from here on: it is read once more now.
  // Its writer gone, that read is the last (reloaded(), then poll()).
  reload_pending_ = true;
  emit reloadWanted(path_);
}

void SessionFollower::reloaded(const QString& path, bool closed) {
  if (path != path_) return;
  reload_pending_ = false;
  if (!closed) return poll();  // its writer gone, this read was the last
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
    setStatus(writerGoneText(pid));
  }
}

void SessionFollower::setStatus(const QString& text) {
  if (text == status_) return;
  status_ = text;
  emit statusChanged(status_);
}

}  // namespace ampscope::ui
