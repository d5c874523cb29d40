#pragma once
// Asks what to run for File → Run a Python script…: the script and its arguments,
// the Python, the precision to run its autocast regions in, a step limit, and the
// session file (a fresh one where the built-in runs' sessions go unless chosen). The
// last choices are remembered (QSettings).
#include <QDialog>
#include <optional>

#include "ui/widgets/script_runner.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace ampscope::ui {

class ScriptRunDialog : public QDialog {
  Q_OBJECT
 public:
  explicit ScriptRunDialog(QWidget* parent = nullptr);

  // The dialog's fields as a request; nullopt (and the reason shown in the dialog)
  // when the script is not a file.
  std::optional<ScriptRunRequest> request();
  void setRequest(const ScriptRunRequest& request);
  // A fresh session file for `script`: <defaultSessionsDirectory()>/<name>-<date>-<time>.ampscope.
  static QString defaultSessionPath(const QString& script);

  // Shows the dialog; the request when the user pressed Run (and agreed to replace an
  // existing session file).
  static std::optional<ScriptRunRequest> ask(QWidget* parent);

 private:
  void browseScript();
  void browseSession();
  void remember(const ScriptRunRequest& request) const;

  QLineEdit* script_ = nullptr;
  QLineEdit* arguments_ = nullptr;
  QLineEdit* python_ = nullptr;
  QComboBox* precision_ = nullptr;
  QSpinBox* max_steps_ = nullptr;
  QCheckBox* trace_gpu_ = nullptr;
  QLineEdit* session_ = nullptr;
  QLineEdit* working_dir_ = nullptr;
  QLabel* problem_ = nullptr;
};

}  // namespace ampscope::ui
