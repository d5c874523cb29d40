#pragma once
// Runs the user's own Python training script under capture from the GUI: the
// `ampscope run` command this build installs beside the GUI, in a process of its
// own (the capture runs in the script's process; the window only reads the session
// it writes). Says when the session file begins, so the window opens and follows
// it live (SessionFollower), keeps what the script prints, stops it as Ctrl-C
// would, and says in one line how it ended.
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringDecoder>
#include <QStringList>
#include <QTimer>

#include "profiler/capture_settings.h"
#include "profiler/compare/comparison_runner.h"

namespace ampscope::ui {

// What to run: `ampscope run [--precision P] [--max-steps N] [--every K ...] [--no-gpu-trace]
// [--nproc-per-node N] --out SESSION --force [-m] SCRIPT ARGS...` in `working_dir`; with `compare`, the script's
// precision comparison: `ampscope run --compare V,W --repeats R [--warmup W --profile-steps P]
// [--max-steps N] ...`.
struct ScriptRunRequest {
  QString script;             // a .py file; with `module`, a module name (pkg.train)
  bool module = false;        // run as `python -m SCRIPT` runs it, from `working_dir`
  QStringList arguments;      // the script's own
  QString python;             // empty: the one `ampscope run` picks ($AMPSCOPE_PYTHON, the virtualenv, the build's)
  QString precision = QStringLiteral("script");  // ampscope run --precision (not with `compare`)
  int max_steps = 0;          // 0: no limit (with `compare`: the comparison's default)
  // `ampscope run`'s sampling flags (those not at their default) and --no-gpu-trace. With
  // `compare`, only trace_gpu: the comparison sets each run's sampling itself.
  profiler::CaptureSettings capture;
  QString session_path;       // the session (or comparison) file it writes, replaced when it exists
  QString working_dir;        // empty: the script's directory (a module needs one)
  QStringList compare;        // precisions to compare (fp32, tf32, fp16, bf16); empty: one profiled run
  int repeats = static_cast<int>(profiler::ComparisonOptions{}.repeats);  // with `compare`: timed runs per precision
  // With `compare`: warm-up steps left out of the timing, and steps profiled after them; -1:
  // `ampscope run --compare`'s own (the Run-a-script dialog leaves them so).
  int warmup_steps = -1;
  int profiled_steps = -1;
  // > 0 runs N ranks of the script under torchrun on this machine (`ampscope run --nproc-per-node
  // N`), with `compare` each of the comparison's runs; 0, one process.
  int nproc_per_node = 0;

  bool comparing() const { return !compare.isEmpty(); }
  bool underTorchrun() const { return nproc_per_node > 0; }
  // The session files it writes: `session_path`, or one per rank (FILE.rank<R>.ampscope, rank 0
  // first) where torchrun runs several and it is not a comparison (whose file is one).
  QStringList sessionPaths() const;
  // What the window calls the run: the script's file name, or the module's name.
  QString name() const;
};

class ScriptRunner : public QObject {
  Q_OBJECT
 public:
  static constexpr int kPollIntervalMs = 200;
  static constexpr qsizetype kKeptOutputChars = 1 << 20;  // the window keeps the last MiB of output

  explicit ScriptRunner(QObject* parent = nullptr);
  ~ScriptRunner() override;

  // The `ampscope` command that runs scripts: $AMPSCOPE_CLI, else the one beside this
  // program (installed), else this build's, else one on PATH; "" when there is none.
  static QString cliPath();
  // The command line start() runs, the program first (shown in the output pane).
  static QStringList commandLine(const QString& cli, const ScriptRunRequest& request);

  // Starts the run; false with a one-line reason when it cannot (another run going, no
  // script, a module without a working directory, no `ampscope` command).
  bool start(const ScriptRunRequest& request, QString* why_not);
  // Stops the script as Ctrl-C stops it (SIGINT: it closes its session "stopped"); asked
  // again while it is still stopping, kills it and every process it started (the session
  // keeps what was written; a comparison leaves no run of the script training on).
  void stop();
  bool isRunning() const { return process_.state() != QProcess::NotRunning; }
  bool stopping() const { return interrupts_sent_ > 0; }
  const ScriptRunRequest& request() const { return request_; }
  QString scriptName() const;
  // What the script and ampscope printed (stdout and stderr together) since start(), the
  // last kKeptOutputChars of it.
  QString output() const { return output_; }
  qint64 pid() const { return process_.processId(); }
  // This run's session (or comparison) file began: sessionStarted was emitted.
  bool sessionSeen() const { return session_started_; }

 signals:
  // start() launched `command_line` (the pid is known unless it failed to start).
  void started(const QString& command_line);
  void outputAppended(const QString& text);
  // The session file holds its first commit (a comparison's: its first finished run): the
  // window can open it now.
  void sessionStarted(const QString& path);
  // The process ended: `ok` when it exited 0 (finished, or stopped after --max-steps);
  // `summary` says how, in one line, with the script's own last words when it failed.
  void finished(bool ok, const QString& summary);

 private:
  void readOutput();
  void pollSession();
  void onFinished(int exit_code, QProcess::ExitStatus status);
  void onError(QProcess::ProcessError error);
  QString lastLine() const;

  QProcess process_;
  QTimer poll_;
  ScriptRunRequest request_;
  QString output_;
  QStringDecoder decoder_{QStringDecoder::Utf8};  // a character split across two reads stays whole
  bool session_started_ = false;
  int interrupts_sent_ = 0;
  qint64 launched_ms_since_epoch_ = 0;
};

}  // namespace ampscope::ui
