#pragma once
// Asks what to run for File → Run a Python script…: the script (or a module, as
// `python -m` runs it) and its arguments, the Python, what to do with it (profile one
// run in a precision, or compare precisions: timed runs of each, then one profiled),
// a step limit, the capture's sampling (`ampscope run`'s flags, in the Run panel's Profiling
// form), and the session or comparison file (a fresh one where the built-in runs' sessions go
// unless chosen). The last choices are remembered (QSettings).
#include <QDialog>
#include <QList>
#include <optional>

#include "profiler/script_facts.h"
#include "ui/widgets/script_runner.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace ampscope::ui {

class CaptureSettingsForm;

class ScriptRunDialog : public QDialog {
  Q_OBJECT
 public:
  explicit ScriptRunDialog(QWidget* parent = nullptr);

  // The dialog's fields as a request; nullopt (and the reason shown in the dialog)
  // when the script is not a file, a module has no directory to run from, or a comparison
  // has fewer than two precisions.
  std::optional<ScriptRunRequest> request();
  void setRequest(const ScriptRunRequest& request);
  // A fresh session file for `script`: <defaultSessionsDirectory()>/<name>-<date>-<time>.ampscope
  // (<name>-compare-<date>-<time> for a comparison).
  static QString defaultSessionPath(const QString& script, bool comparison = false);

  // Shows the dialog, filled in with `prefill` (else the last choices); the request when the
  // user pressed Run (and agreed to replace an existing session file).
  static std::optional<ScriptRunRequest> ask(QWidget* parent, const std::optional<ScriptRunRequest>& prefill = {});
  // A script's session or comparison, as it ran (`facts.command`), to run again: a comparison's
  // precisions, a session's --precision, step limit, capture sampling and torchrun's ranks, kernel
  // tracing; a fresh file. nullopt without a command, or for a rank of torchrun on several machines.
  static std::optional<ScriptRunRequest> rerunRequest(const profiler::ScriptFacts& facts);

 private:
  void browseScript();
  void browseSession();
  void remember(const ScriptRunRequest& request) const;
  // Runs the dialog until a request it can run, or Cancel.
  std::optional<ScriptRunRequest> answer(QWidget* parent);
  bool comparing() const;
  // The fields that mean something for the mode (profile or compare) and the script's kind.
  void updateFields();

  QLineEdit* script_ = nullptr;
  QCheckBox* module_ = nullptr;
  QLineEdit* arguments_ = nullptr;
  QLineEdit* python_ = nullptr;
  QComboBox* mode_ = nullptr;
  QComboBox* precision_ = nullptr;
  QWidget* compare_row_ = nullptr;
  QList<QCheckBox*> compared_;  // fp32, tf32, fp16, bf16
  QSpinBox* repeats_ = nullptr;
  QSpinBox* max_steps_ = nullptr;
  QSpinBox* nproc_ = nullptr;  // torchrun's ranks on this machine; 0: one process
  CaptureSettingsForm* capture_ = nullptr;  // ampscope run's sampling flags and kernel tracing
  QGroupBox* capture_group_ = nullptr;
  QLineEdit* session_ = nullptr;
  QLineEdit* working_dir_ = nullptr;
  QFormLayout* form_ = nullptr;
  QLabel* problem_ = nullptr;
};

}  // namespace ampscope::ui
