#include "ui/widgets/script_run_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include "ui/models/session_io.h"
#include "ui/widgets/live_profiling.h"

namespace ampscope::ui {
namespace {

constexpr char kScriptKey[] = "scriptRun/script";
constexpr char kArgumentsKey[] = "scriptRun/arguments";
constexpr char kPythonKey[] = "scriptRun/python";
constexpr char kPrecisionKey[] = "scriptRun/precision";
constexpr char kMaxStepsKey[] = "scriptRun/maxSteps";

// A line edit with a Browse button beside it.
QWidget* withBrowse(QLineEdit* edit, QPushButton** button) {
  auto* row = new QWidget;
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  *button = new QPushButton(QObject::tr("Browse…"));
  layout->addWidget(edit, 1);
  layout->addWidget(*button);
  return row;
}

// The arguments as one line QProcess::splitCommand splits back into them.
QString joinedCommand(const QStringList& arguments) {
  QStringList quoted;
  for (QString a : arguments) {
    if (!a.isEmpty() && !a.contains(QLatin1Char(' ')) && !a.contains(QLatin1Char('"'))) {
      quoted << a;
      continue;
    }
    a.replace(QLatin1Char('"'), QStringLiteral("\"\"\""));  // splitCommand reads """ as one quote inside quotes
    quoted << QLatin1Char('"') + a + QLatin1Char('"');
  }
  return quoted.join(QLatin1Char(' '));
}

}  // namespace

ScriptRunDialog::ScriptRunDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Run a Python script under capture"));
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(tr("Runs your training script unmodified, as <code>ampscope run</code> does, in a process "
                              "of its own: every op with what autocast did, the loss scale per optimizer, gradient "
                              "ranges, kernels on CUDA. The session opens here and follows the run live."));
  intro->setWordWrap(true);
  layout->addWidget(intro);
  auto* form = new QFormLayout;
  QPushButton* browse_script = nullptr;
  QPushButton* browse_session = nullptr;
  script_ = new QLineEdit;
  script_->setPlaceholderText(tr("train.py"));
  arguments_ = new QLineEdit;
  arguments_->setPlaceholderText(tr("the script's own, quoted as in a shell: --epochs 1 --name \"a b\""));
  python_ = new QLineEdit;
  python_->setPlaceholderText(tr("as ampscope run picks it: $AMPSCOPE_PYTHON, the active virtualenv, this build's"));
  precision_ = new QComboBox;
  precision_->addItem(tr("as the script asks"), QStringLiteral("script"));
  for (const char* p : {"fp32", "tf32", "fp16", "bf16"})
    precision_->addItem(QString::fromLatin1(p), QString::fromLatin1(p));
  precision_->setToolTip(tr("Runs the script's autocast regions in this precision (ampscope run --precision): fp32 "
                            "and tf32 (CUDA) turn them off, fp16 and bf16 set their dtype"));
  max_steps_ = new QSpinBox;
  max_steps_->setRange(0, 100000000);
  max_steps_->setSpecialValueText(tr("no limit"));
  max_steps_->setToolTip(tr("Stops the script as step N+1 would begin (ampscope run --max-steps)"));
  trace_gpu_ = new QCheckBox(tr("Trace CUDA kernels (CUPTI)"));
  trace_gpu_->setChecked(true);
  session_ = new QLineEdit;
  working_dir_ = new QLineEdit;
  working_dir_->setPlaceholderText(tr("the script's directory"));
  form->addRow(tr("Script"), withBrowse(script_, &browse_script));
  form->addRow(tr("Arguments"), arguments_);
  form->addRow(tr("Python"), python_);
  form->addRow(tr("Precision"), precision_);
  form->addRow(tr("Stop after"), max_steps_);
  form->addRow(QString(), trace_gpu_);
  form->addRow(tr("Session file"), withBrowse(session_, &browse_session));
  form->addRow(tr("Working directory"), working_dir_);
  layout->addLayout(form);
  problem_ = new QLabel;
  problem_->setStyleSheet(QStringLiteral("color: #b3261e"));
  problem_->hide();
  layout->addWidget(problem_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Run"));
  layout->addWidget(buttons);
  connect(browse_script, &QPushButton::clicked, this, &ScriptRunDialog::browseScript);
  connect(browse_session, &QPushButton::clicked, this, &ScriptRunDialog::browseSession);
  connect(buttons, &QDialogButtonBox::accepted, this, [this] {
    if (request()) accept();
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  // A new script gets a fresh session file unless one was chosen.
  connect(script_, &QLineEdit::editingFinished, this, [this] {
    if (session_->text().isEmpty() || !session_->isModified()) session_->setText(defaultSessionPath(script_->text()));
  });
  resize(720, sizeHint().height());
}

QString ScriptRunDialog::defaultSessionPath(const QString& script) {
  const QString dir = defaultSessionsDirectory();  // where the built-in runs' sessions go
  const QString name = QFileInfo(script).completeBaseName();
  return QStringLiteral("%1/%2-%3.%4")
      .arg(dir, name.isEmpty() ? QStringLiteral("script") : name,
           QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")), QLatin1String(kSessionSuffix));
}

std::optional<ScriptRunRequest> ScriptRunDialog::request() {
  const auto problem = [this](const QString& text) {
    problem_->setText(text);
    problem_->show();
    return std::nullopt;
  };
  ScriptRunRequest r;
  r.script = QFileInfo(script_->text().trimmed()).absoluteFilePath();
  if (script_->text().trimmed().isEmpty() || !QFileInfo(r.script).isFile())
    return problem(tr("'%1' is not a file: choose the training script to run").arg(script_->text().trimmed()));
  r.arguments = QProcess::splitCommand(arguments_->text());
  r.python = python_->text().trimmed();
  r.precision = precision_->currentData().toString();
  r.max_steps = max_steps_->value();
  r.trace_gpu = trace_gpu_->isChecked();
  r.session_path = session_->text().trimmed();
  if (r.session_path.isEmpty()) r.session_path = defaultSessionPath(r.script);
  if (QFileInfo(r.session_path).suffix().isEmpty()) r.session_path += QLatin1Char('.') + QLatin1String(kSessionSuffix);
  r.session_path = QFileInfo(r.session_path).absoluteFilePath();
  r.working_dir = working_dir_->text().trimmed();
  if (!r.working_dir.isEmpty() && !QFileInfo(r.working_dir).isDir())
    return problem(tr("working directory '%1' is not a directory").arg(r.working_dir));
  problem_->hide();
  return r;
}

void ScriptRunDialog::setRequest(const ScriptRunRequest& r) {
  script_->setText(r.script);
  arguments_->setText(joinedCommand(r.arguments));
  python_->setText(r.python);
  precision_->setCurrentIndex(std::max(0, precision_->findData(r.precision)));
  max_steps_->setValue(r.max_steps);
  trace_gpu_->setChecked(r.trace_gpu);
  session_->setText(r.session_path.isEmpty() && !r.script.isEmpty() ? defaultSessionPath(r.script) : r.session_path);
  session_->setModified(false);
  working_dir_->setText(r.working_dir);
}

void ScriptRunDialog::browseScript() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Training script"), QFileInfo(script_->text()).path(),
                                                    tr("Python scripts (*.py);;All files (*)"));
  if (path.isEmpty()) return;
  script_->setText(path);
  if (!session_->isModified()) session_->setText(defaultSessionPath(path));
}

void ScriptRunDialog::browseSession() {
  QString path = QFileDialog::getSaveFileName(this, tr("Session file"), session_->text(),
                                              tr("ampscope sessions (*.%1)").arg(kSessionSuffix),
                                              nullptr, QFileDialog::DontConfirmOverwrite);
  if (path.isEmpty()) return;
  session_->setText(path);
  session_->setModified(true);
}

void ScriptRunDialog::remember(const ScriptRunRequest& r) const {
  QSettings settings;
  settings.setValue(kScriptKey, r.script);
  settings.setValue(kArgumentsKey, r.arguments);
  settings.setValue(kPythonKey, r.python);
  settings.setValue(kPrecisionKey, r.precision);
  settings.setValue(kMaxStepsKey, r.max_steps);
}

std::optional<ScriptRunRequest> ScriptRunDialog::ask(QWidget* parent) {
  ScriptRunDialog dialog(parent);
  QSettings settings;
  ScriptRunRequest last;
  last.script = settings.value(kScriptKey).toString();
  last.arguments = settings.value(kArgumentsKey).toStringList();
  last.python = settings.value(kPythonKey).toString();
  last.precision = settings.value(kPrecisionKey, QStringLiteral("script")).toString();
  last.max_steps = settings.value(kMaxStepsKey, 0).toInt();
  dialog.setRequest(last);
  while (dialog.exec() == QDialog::Accepted) {
    std::optional<ScriptRunRequest> r = dialog.request();
    if (!r) continue;
    if (QFileInfo::exists(r->session_path) &&
        QMessageBox::question(parent, tr("Replace the session?"),
                              tr("%1 exists. Replace it with this run's session?").arg(r->session_path)) !=
            QMessageBox::Yes)
      continue;
    dialog.remember(*r);
    return r;
  }
  return std::nullopt;
}

}  // namespace ampscope::ui
