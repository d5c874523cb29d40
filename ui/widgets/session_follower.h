#pragma once
// Follows a session file that another process is still writing (`ampscope
// profile`, `ampscope run train.py` on this machine): when the file or its WAL
// changes, asks for it to be read again; says "live" while the writer runs, and
// when it is gone.
//
// The writer is known from the session's meta (pid and host, written when the
// session is created). A run that ends cleanly writes final_state; a writer whose
// process is gone without it was killed. Only a writer on this host can be checked;
// another host's is followed until the file stops changing.
#include <QDateTime>
#include <QObject>
#include <QString>
#include <QTimer>
#include <cstdint>

namespace ampscope::ui {

class SessionFollower : public QObject {
  Q_OBJECT
 public:
  static constexpr int kPollIntervalMs = 1000;

  explicit SessionFollower(QObject* parent = nullptr);

  // Starts following `path`, last read with `closed` (its run has ended) and the
  // writer's pid and host from its meta (0 / "" when unknown). Not closed, it is read once
  // more at once: what was written since that read (the whole end of a short run) shows.
  void follow(const QString& path, bool closed, int64_t writer_pid, const QString& writer_host);
  // The file was read again (after reloadWanted): its run may have ended since.
  void reloaded(const QString& path, bool closed);
  void stop();
  bool isFollowing() const { return !path_.isEmpty(); }
  QString statusText() const { return status_; }

 signals:
  // The followed file changed: read it again, then call reloaded().
  void reloadWanted(const QString& path);
  // "live: …" while following, what became of the writer after; "" when not following.
  void statusChanged(const QString& text);

 private:
  struct Signature {
    qint64 size = -1, wal_size = -1;
    QDateTime modified, wal_modified;
    bool operator==(const Signature&) const = default;
  };
  static Signature signatureOf(const QString& path);
  static QString writerGoneText(int64_t pid);
  void poll();
  void setStatus(const QString& text);

  QTimer timer_;
  QString path_;
  int64_t writer_pid_ = 0;
  bool writer_checkable_ = false;  // the writer runs on this host: its pid can be checked
  Signature seen_;
  bool reload_pending_ = false;
  QString status_;
};

}  // namespace ampscope::ui
