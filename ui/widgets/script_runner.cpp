#include "ui/widgets/script_runner.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <sys/types.h>
#include <unistd.h>

#include <csignal>
#include <exception>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "profiler/store/comparison_store.h"
#include "profiler/store/rank_comparison.h"

namespace ampscope::ui {
namespace {

// The run is a process group of its own (start() makes it one): `ampscope run` and, for a
// comparison, the script's run it waits for. A signal goes to the whole group, as a
// terminal's Ctrl-C does, so Stop reaches the script that trains, and a kill leaves no run
// training on. kill(0, ...) would signal the GUI's own group, so a process not started yet
// (no pid) is not signalled; one signalled before it made its group gets it alone.
bool signalRun(const QProcess& process, int signal) {
  const auto pid = static_cast<pid_t>(process.processId());
  return pid > 0 && (::kill(-pid, signal) == 0 || ::kill(pid, signal) == 0);
}

// Every process below `root`, from /proc's parent links: torchrun starts each rank in a
// session of its own, outside the run's group, so a kill of the group alone would leave
// the ranks training.
std::vector<pid_t> processesUnder(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  for (const QString& entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
    bool number = false;
    const pid_t pid = entry.toInt(&number);
    if (!number) continue;
    std::ifstream stat("/proc/" + entry.toStdString() + "/stat");
    const std::string line((std::istreambuf_iterator<char>(stat)), {});
    // "pid (name) state ppid ...": the name may hold spaces and parentheses; the last ')' ends it.
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    char state = 0;
    pid_t parent = 0;
    if (rest >> state >> parent) children.emplace(parent, pid);
  }
  std::vector<pid_t> under;
  std::vector<pid_t> next{root};
  while (!next.empty()) {
    const pid_t pid = next.back();
    next.pop_back();
    for (auto [it, end] = children.equal_range(pid); it != end; ++it) {
      under.push_back(it->second);
      next.push_back(it->second);
    }
  }
  return under;
}

// The run's group and every process below it, found before the kill (after it, they belong
// to init).
void killRun(QProcess& process) {
  const auto pid = static_cast<pid_t>(process.processId());
  const std::vector<pid_t> under = pid > 0 ? processesUnder(pid) : std::vector<pid_t>{};
  if (!signalRun(process, SIGKILL)) process.kill();
  for (const pid_t child : under) ::kill(child, SIGKILL);
}

bool isProgram(const QString& path) {
  const QFileInfo info(path);
  return info.isFile() && info.isExecutable();
}

// The file was written since `since_ms` (this run's writer: a session it replaces, or a
// stale WAL a killed run left, is older) and holds data.
bool writtenSince(const QString& path, qint64 since_ms) {
  const QFileInfo info(path);
  return info.exists() && info.size() > 0 && info.lastModified().toMSecsSinceEpoch() >= since_ms;
}

bool isComparisonFile(const QString& path) {
  try {
    return profiler::is_comparison_file(path.toStdString());
  } catch (const std::exception&) {
    return false;  // still being created
  }
}

}  // namespace

ScriptRunner::ScriptRunner(QObject* parent) : QObject(parent) {
  process_.setProcessChannelMode(QProcess::MergedChannels);
  process_.setChildProcessModifier([] { ::setpgid(0, 0); });  // in the child, before exec
  poll_.setInterval(kPollIntervalMs);
  connect(&poll_, &QTimer::timeout, this, &ScriptRunner::pollSession);
  connect(&process_, &QProcess::readyReadStandardOutput, this, &ScriptRunner::readOutput);
  connect(&process_, &QProcess::finished, this, &ScriptRunner::onFinished);
  connect(&process_, &QProcess::errorOccurred, this, &ScriptRunner::onError);
}

ScriptRunner::~ScriptRunner() {
  if (!isRunning()) return;
  // The window closes: the script stops as Ctrl-C stops it and closes its session; one
  // that does not within a few seconds is killed (its session keeps what was written).
  process_.disconnect(this);
  if (!signalRun(process_, SIGINT) || !process_.waitForFinished(5000)) {
    killRun(process_);
    process_.waitForFinished(2000);
  }
}

QString ScriptRunner::cliPath() {
  if (const QString env = qEnvironmentVariable("AMPSCOPE_CLI"); !env.isEmpty()) return isProgram(env) ? env : QString();
  if (const QString beside = QCoreApplication::applicationDirPath() + QStringLiteral("/ampscope"); isProgram(beside))
    return beside;
#if defined(AMPSCOPE_BUILD_CLI)
  if (const QString built = QStringLiteral(AMPSCOPE_BUILD_CLI); isProgram(built)) return built;
#endif
  return QStandardPaths::findExecutable(QStringLiteral("ampscope"));
}

QString ScriptRunRequest::name() const { return module ? script : QFileInfo(script).fileName(); }

QStringList ScriptRunRequest::sessionPaths() const {
  // One rank names no file of its own; a comparison's runs' ranks write into its temporary directory.
  if (comparing() || !underTorchrun() || nproc_per_node == 1) return {session_path};
  QStringList paths;
  for (int rank = 0; rank < nproc_per_node; ++rank)
    paths << QString::fromStdString(profiler::rank_session_path(session_path.toStdString(), rank));
  return paths;
}

QStringList ScriptRunner::commandLine(const QString& cli, const ScriptRunRequest& r) {
  // --force: the window asked before replacing a file; `ampscope run` still refuses one
  // that is not a session, or a session another run is writing, with its own message.
  QStringList line{cli, QStringLiteral("run"), QStringLiteral("--out"), r.session_path, QStringLiteral("--force")};
  if (r.comparing()) {
    // Each run's precision is the comparison's: --precision is refused beside it.
    line << QStringLiteral("--compare") << r.compare.join(QLatin1Char(',')) << QStringLiteral("--repeats")
         << QString::number(r.repeats);
    if (r.warmup_steps >= 0) line << QStringLiteral("--warmup") << QString::number(r.warmup_steps);
    if (r.profiled_steps >= 0) line << QStringLiteral("--profile-steps") << QString::number(r.profiled_steps);
    if (r.max_steps > 0) line << QStringLiteral("--max-steps") << QString::number(r.max_steps);
  } else {
    line << QStringLiteral("--precision") << r.precision << QStringLiteral("--max-steps")
         << QString::number(r.max_steps);
    // The defaults are `ampscope run`'s own: the line shows what was chosen.
    for (const auto& field : r.capture.fields())
      if (*field.value != field.option->default_value)
        line << QLatin1String(field.option->flag) << QString::number(*field.value);
  }
  if (r.underTorchrun()) line << QStringLiteral("--nproc-per-node") << QString::number(r.nproc_per_node);
  if (!r.capture.trace_gpu) line << QStringLiteral("--no-gpu-trace");
  if (r.module) line << QStringLiteral("-m");
  line << QStringLiteral("--") << r.script << r.arguments;
  return line;
}

QString ScriptRunner::scriptName() const { return request_.name(); }

bool ScriptRunner::start(const ScriptRunRequest& request, QString* why_not) {
  const auto refuse = [&](const QString& why) {
    if (why_not) *why_not = why;
    return false;
  };
  if (isRunning()) return refuse(tr("%1 is still running (pid %2): stop it first").arg(scriptName()).arg(pid()));
  if (request.module) {
    // Python finds a module from the directory it starts in, as `python -m` does in a shell.
    if (request.script.isEmpty()) return refuse(tr("no module to run: name it as python -m takes it (pkg.train)"));
    if (request.working_dir.isEmpty() || !QFileInfo(request.working_dir).isDir())
      return refuse(tr("module %1 needs the directory to run it from (where `python -m %1` works): '%2' is not one")
                        .arg(request.script, request.working_dir));
  } else if (!QFileInfo(request.script).isFile()) {
    return refuse(tr("no script to run: '%1' is not a file").arg(request.script));
  }
  if (request.session_path.isEmpty()) return refuse(tr("no session file to write"));
  const QString cli = cliPath();
  if (cli.isEmpty())
    return refuse(tr("no `ampscope` command beside the GUI, in this build or on PATH (set AMPSCOPE_CLI to it)"));
  QDir().mkpath(QFileInfo(request.session_path).absolutePath());  // the sessions directory, on a first run
  request_ = request;
  // It runs in the script's directory: a path given relative to ours would not be found there.
  if (!request.module) request_.script = QFileInfo(request.script).absoluteFilePath();
  request_.session_path = QFileInfo(request.session_path).absoluteFilePath();
  output_.clear();
  decoder_ = QStringDecoder(QStringDecoder::Utf8);
  session_started_ = false;
  interrupts_sent_ = 0;
  launched_ms_since_epoch_ = QDateTime::currentMSecsSinceEpoch();
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("PYTHONUNBUFFERED"), QStringLiteral("1"));  // its prints as they happen
  if (!request.python.isEmpty()) env.insert(QStringLiteral("AMPSCOPE_PYTHON"), request.python);
  process_.setProcessEnvironment(env);
  process_.setWorkingDirectory(request.working_dir.isEmpty() ? QFileInfo(request_.script).absolutePath()
                                                             : request.working_dir);
  const QStringList line = commandLine(cli, request_);
  process_.start(line.front(), line.mid(1));
  emit started(line.join(QLatin1Char(' ')));
  poll_.start();
  return true;
}

void ScriptRunner::stop() {
  if (!isRunning()) return;
  // Ctrl-C goes to the group; torchrun passes it on to its ranks (their own sessions).
  if (interrupts_sent_++ == 0 && signalRun(process_, SIGINT)) return;
  killRun(process_);
}

void ScriptRunner::readOutput() {
  const QString text = decoder_.decode(process_.readAllStandardOutput());
  if (text.isEmpty()) return;
  output_ += text;
  if (output_.size() > kKeptOutputChars) output_.remove(0, output_.size() - kKeptOutputChars);
  emit outputAppended(text);
}

void ScriptRunner::pollSession() {
  if (session_started_) return poll_.stop();
  // The writer creates the file empty, then commits the schema and the run's settings to
  // its write-ahead log: readable from there (after a checkpoint or its close, the file).
  // Under torchrun the window follows rank 0's.
  const QString followed = request_.sessionPaths().front();
  if (!writtenSince(followed + QStringLiteral("-wal"), launched_ms_since_epoch_) &&
      !writtenSince(followed, launched_ms_since_epoch_))
    return;
  // A comparison file is a session file first, its comparison tables committed a moment
  // later: opened in between, it would read as an empty session.
  if (request_.comparing() && !isComparisonFile(request_.session_path)) return;
  session_started_ = true;
  poll_.stop();
  emit sessionStarted(followed);
}

QString ScriptRunner::lastLine() const {
  const QStringList lines = output_.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  for (auto it = lines.crbegin(); it != lines.crend(); ++it)
    if (const QString line = it->trimmed(); !line.isEmpty()) return line.left(400);
  return {};
}

void ScriptRunner::onFinished(int exit_code, QProcess::ExitStatus status) {
  readOutput();
  pollSession();  // a run that ended before the first poll saw its session
  poll_.stop();
  const QString name = scriptName();
  const QString last = lastLine();
  const QString no_session = session_started_       ? QString()
                             : request_.comparing() ? tr("; it wrote no comparison file")
                                                    : tr("; it wrote no session");
  bool ok = false;
  QString summary;
  if (status == QProcess::CrashExit) {
    // Python dies by SIGINT itself when Ctrl-C comes before the capture's handling (importing torch).
    summary = interrupts_sent_ > 1 ? tr("%1 was killed (Stop, twice)").arg(name)
              : interrupts_sent_ == 1 ? tr("%1 stopped (Stop)").arg(name)
                                      : tr("%1 crashed: killed by a signal").arg(name);
    ok = interrupts_sent_ > 0;
    summary += session_started_ ? tr("; its session keeps the steps written before") : QString();
  } else if (exit_code == 0 && request_.comparing()) {
    ok = true;
    summary = tr("%1: the precision comparison finished (%2), written to %3")
                  .arg(name, request_.compare.join(QStringLiteral(", ")), request_.session_path);
  } else if (exit_code == 0 || (interrupts_sent_ > 0 && exit_code == 130)) {
    ok = true;
    // torchrun's ranks each printed a line, and `ampscope run` their table after them: the last
    // line is none of theirs.
    const QStringList ranks = request_.sessionPaths();
    const QString ended = exit_code == 0 ? tr("%1 finished").arg(name) : tr("%1 stopped (Stop)").arg(name);
    if (ranks.size() > 1)
      summary = tr("%1: %2 ranks under torchrun, a session each (%3 … %4)")
                    .arg(ended)
                    .arg(ranks.size())
                    .arg(QFileInfo(ranks.front()).fileName(), QFileInfo(ranks.back()).fileName());
    else if (exit_code == 0)
      summary = last.startsWith(QStringLiteral("ampscope: session")) ? last : ended;
    else
      summary = tr("%1: %2").arg(ended, last);
  } else {
    summary = tr("%1 failed (exit status %2): %3").arg(name).arg(exit_code).arg(last);
  }
  emit finished(ok, summary + no_session);
}

void ScriptRunner::onError(QProcess::ProcessError error) {
  if (error != QProcess::FailedToStart) return;  // a crash ends in onFinished
  poll_.stop();
  // Queued: after start() has returned and said the run began.
  QMetaObject::invokeMethod(
      this,
      [this, why = tr("cannot start '%1': %2").arg(process_.program(), process_.errorString())] {
        emit finished(false, why);
      },
      Qt::QueuedConnection);
}

}  // namespace ampscope::ui
