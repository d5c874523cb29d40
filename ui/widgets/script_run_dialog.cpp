#include "ui/widgets/script_run_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProcess>
#include <QRegularExpression>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>
#include <map>
#include <string>

#include "profiler/compare/comparison_runner.h"
#include "ui/models/formatting.h"
#include "ui/models/session_io.h"
#include "ui/widgets/capture_settings_form.h"
#include "ui/widgets/live_profiling.h"

namespace ampscope::ui {
namespace {

constexpr char kScriptKey[] = "scriptRun/script";
constexpr char kArgumentsKey[] = "scriptRun/arguments";
constexpr char kPythonKey[] = "scriptRun/python";
constexpr char kPrecisionKey[] = "scriptRun/precision";
constexpr char kMaxStepsKey[] = "scriptRun/maxSteps";
constexpr char kModuleKey[] = "scriptRun/module";
constexpr char kWorkingDirKey[] = "scriptRun/workingDir";
constexpr char kCompareKey[] = "scriptRun/compare";  // empty: profile one run
constexpr char kRepeatsKey[] = "scriptRun/repeats";
constexpr char kNprocKey[] = "scriptRun/nprocPerNode";
constexpr char kCaptureGroup[] = "scriptRun/capture";  // CaptureSettings' meta keys and values
constexpr int kProfileMode = 0, kCompareMode = 1;

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
  module_ = new QCheckBox(tr("A module, run as python -m runs it (the Script field names it: pkg.train)"));
  mode_ = new QComboBox;
  mode_->addItem(tr("Profile one run"));
  mode_->addItem(tr("Compare precisions"));
  mode_->setToolTip(tr("Compare precisions (ampscope run --compare): the script runs several times in each "
                       "precision, interleaved, its steps timed with no op recorded, then once more per precision "
                       "with a few steps profiled; speedups against fp32, per run and per op"));
  precision_ = new QComboBox;
  precision_->addItem(tr("as the script asks"), QStringLiteral("script"));
  for (const QString& p : precisionVariants()) precision_->addItem(p, p);
  precision_->setToolTip(tr("Runs the script's autocast regions in this precision (ampscope run --precision): fp32 "
                            "and tf32 (CUDA) turn them off, fp16 and bf16 set their dtype"));
  compare_row_ = new QWidget;
  auto* compare_layout = new QHBoxLayout(compare_row_);
  compare_layout->setContentsMargins(0, 0, 0, 0);
  for (const QString& p : precisionVariants()) {
    auto* box = new QCheckBox(p);
    box->setToolTip(variantDescription(p));
    compared_ << box;
    compare_layout->addWidget(box);
  }
  repeats_ = new QSpinBox;
  repeats_->setRange(1, 50);
  repeats_->setSuffix(tr(" timed runs each"));
  repeats_->setToolTip(tr("Timed runs per precision (ampscope run --compare --repeats): the speedup's spread is "
                          "over these"));
  compare_layout->addSpacing(12);
  compare_layout->addWidget(repeats_);
  compare_layout->addStretch(1);
  max_steps_ = new QSpinBox;
  max_steps_->setRange(0, 100000000);
  max_steps_->setSuffix(tr(" steps"));
  nproc_ = new QSpinBox;
  nproc_->setRange(0, 1024);
  nproc_->setSpecialValueText(tr("one process, no torchrun"));
  nproc_->setSuffix(tr(" ranks under torchrun"));
  nproc_->setToolTip(tr("Runs N ranks of the script on this machine, as torchrun --standalone --nproc-per-node N "
                        "does (ampscope run --nproc-per-node N): each writes FILE.rank<R>.ampscope; the window "
                        "follows rank 0 and shows the ranks side by side when they end. Comparing precisions, "
                        "each run is N ranks, and a step is the job's: the slowest rank's time, all ranks' "
                        "samples"));
  capture_ = new CaptureSettingsForm;
  capture_group_ = new QGroupBox(tr("Capture"));
  capture_group_->setToolTip(tr("ampscope run's sampling flags: which steps' ops are recorded, how often gradient "
                                "ranges and precision readiness are sampled, kernel tracing"));
  auto* capture_layout = new QVBoxLayout(capture_group_);
  capture_layout->setContentsMargins(8, 6, 8, 6);
  capture_layout->addWidget(capture_);
  session_ = new QLineEdit;
  working_dir_ = new QLineEdit;
  working_dir_->setPlaceholderText(tr("the script's directory"));
  form_ = form;
  form->addRow(tr("Script"), withBrowse(script_, &browse_script));
  form->addRow(QString(), module_);
  form->addRow(tr("Arguments"), arguments_);
  form->addRow(tr("Python"), python_);
  form->addRow(tr("Run"), mode_);
  form->addRow(tr("Precision"), precision_);
  form->addRow(tr("Compare"), compare_row_);
  form->addRow(tr("Stop after"), max_steps_);
  form->addRow(tr("Processes"), nproc_);
  form->addRow(capture_group_);
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
  // A new script (or mode) gets a fresh file unless one was chosen.
  const auto fresh_file = [this] {
    if (session_->text().isEmpty() || !session_->isModified())
      session_->setText(defaultSessionPath(script_->text(), comparing()));
  };
  connect(script_, &QLineEdit::editingFinished, this, fresh_file);
  connect(mode_, &QComboBox::currentIndexChanged, this, [this, fresh_file] {
    fresh_file();
    updateFields();
  });
  connect(module_, &QCheckBox::toggled, this, &ScriptRunDialog::updateFields);
  updateFields();
  resize(720, sizeHint().height());
}

bool ScriptRunDialog::comparing() const { return mode_->currentIndex() == kCompareMode; }

void ScriptRunDialog::updateFields() {
  const bool compare = comparing();
  // --compare sets each run's precision itself; a step limit is its runs' length.
  form_->setRowVisible(precision_, !compare);
  form_->setRowVisible(compare_row_, compare);
  capture_->setSamplingShown(!compare);
  max_steps_->setSpecialValueText(compare ? tr("%1 steps (the default)").arg(profiler::kDefaultComparedSteps)
                                          : tr("no limit"));
  max_steps_->setToolTip(compare ? tr("Stops each run as step N+1 would begin (ampscope run --compare --max-steps); "
                                      "the first %1 steps of each are warm-up, not timed")
                                       .arg(profiler::ComparisonOptions{}.warmup_steps)
                                 : tr("Stops the script as step N+1 would begin (ampscope run --max-steps)"));
  if (auto* label = qobject_cast<QLabel*>(form_->labelForField(session_->parentWidget())))
    label->setText(compare ? tr("Comparison file") : tr("Session file"));
  working_dir_->setPlaceholderText(module_->isChecked() ? tr("where python -m %1 works: the package's root (needed)")
                                                              .arg(script_->text().trimmed().isEmpty()
                                                                       ? QStringLiteral("pkg.train")
                                                                       : script_->text().trimmed())
                                                        : tr("the script's directory"));
  script_->setPlaceholderText(module_->isChecked() ? tr("pkg.train") : tr("train.py"));
}

QString ScriptRunDialog::defaultSessionPath(const QString& script, bool comparison) {
  const QString dir = defaultSessionsDirectory();  // where the built-in runs' sessions go
  // A module's last part (pkg.train: train), a file's base name.
  const bool module = !script.contains(QLatin1Char('/')) && !script.endsWith(QStringLiteral(".py"));
  QString name = module ? script.section(QLatin1Char('.'), -1) : QFileInfo(script).completeBaseName();
  if (name.isEmpty()) name = QStringLiteral("script");
  return QStringLiteral("%1/%2%3-%4.%5")
      .arg(dir, name, comparison ? QStringLiteral("-compare") : QString(),
           QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")), QLatin1String(kSessionSuffix));
}

std::optional<ScriptRunRequest> ScriptRunDialog::request() {
  const auto problem = [this](const QString& text) {
    problem_->setText(text);
    problem_->show();
    return std::nullopt;
  };
  ScriptRunRequest r;
  r.module = module_->isChecked();
  r.working_dir = working_dir_->text().trimmed();
  if (r.module) {
    r.script = script_->text().trimmed();
    static const QRegularExpression kModuleName(QStringLiteral(R"(^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$)"));
    if (!kModuleName.match(r.script).hasMatch())
      return problem(tr("'%1' is not a module name: name it as python -m takes it (pkg.train)").arg(r.script));
    if (r.working_dir.isEmpty())
      return problem(tr("a module runs from a directory: set the working directory to where python -m %1 works")
                         .arg(r.script));
  } else {
    r.script = QFileInfo(script_->text().trimmed()).absoluteFilePath();
    if (script_->text().trimmed().isEmpty() || !QFileInfo(r.script).isFile())
      return problem(tr("'%1' is not a file: choose the training script to run").arg(script_->text().trimmed()));
  }
  r.arguments = QProcess::splitCommand(arguments_->text());
  r.python = python_->text().trimmed();
  r.precision = precision_->currentData().toString();
  if (comparing()) {
    for (QCheckBox* box : compared_)
      if (box->isChecked()) r.compare << box->text();
    if (r.compare.size() < 2) return problem(tr("a comparison needs two precisions or more: tick them"));
    r.repeats = repeats_->value();
  }
  r.max_steps = max_steps_->value();
  if (r.comparing() && r.max_steps > 0 && r.max_steps <= profiler::ComparisonOptions{}.warmup_steps)
    return problem(tr("each run needs more steps than its %1 of warm-up: stop after %2 or more")
                       .arg(profiler::ComparisonOptions{}.warmup_steps)
                       .arg(profiler::ComparisonOptions{}.warmup_steps + 1));
  // The spin boxes hold each count within its option's bounds; a comparison takes only kernel
  // tracing from them (ScriptRunner::commandLine), and they stay for the next profiled run.
  r.capture = capture_->settings();
  r.nproc_per_node = nproc_->value();
  r.session_path = session_->text().trimmed();
  if (r.session_path.isEmpty()) r.session_path = defaultSessionPath(r.script, r.comparing());
  if (QFileInfo(r.session_path).suffix().isEmpty()) r.session_path += QLatin1Char('.') + QLatin1String(kSessionSuffix);
  r.session_path = QFileInfo(r.session_path).absoluteFilePath();
  if (!r.working_dir.isEmpty() && !QFileInfo(r.working_dir).isDir())
    return problem(tr("working directory '%1' is not a directory").arg(r.working_dir));
  problem_->hide();
  return r;
}

void ScriptRunDialog::setRequest(const ScriptRunRequest& r) {
  script_->setText(r.script);
  module_->setChecked(r.module);
  arguments_->setText(joinedCommand(r.arguments));
  python_->setText(r.python);
  precision_->setCurrentIndex(std::max(0, precision_->findData(r.precision)));
  // Unticked, a comparison's precisions are the comparison page's default: fp32 and bf16.
  const QStringList compared =
      r.comparing() ? r.compare : QStringList{QStringLiteral("fp32"), QStringLiteral("bf16")};
  for (QCheckBox* box : compared_) box->setChecked(compared.contains(box->text()));
  repeats_->setValue(r.repeats);
  max_steps_->setValue(r.max_steps);
  capture_->setSettings(r.capture);
  nproc_->setValue(r.nproc_per_node);
  working_dir_->setText(r.working_dir);
  mode_->setCurrentIndex(r.comparing() ? kCompareMode : kProfileMode);
  session_->setText(r.session_path.isEmpty() && !r.script.isEmpty() ? defaultSessionPath(r.script, r.comparing())
                                                                    : r.session_path);
  session_->setModified(false);
  updateFields();
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
  settings.setValue(kModuleKey, r.module);
  settings.setValue(kWorkingDirKey, r.working_dir);
  settings.setValue(kCompareKey, r.compare);
  settings.setValue(kRepeatsKey, r.repeats);
  settings.setValue(kNprocKey, r.nproc_per_node);
  settings.beginGroup(QLatin1String(kCaptureGroup));
  for (const auto& [key, value] : r.capture.meta_entries())
    settings.setValue(QLatin1String(key), QString::fromStdString(value));
  settings.endGroup();
}

std::optional<ScriptRunRequest> ScriptRunDialog::rerunRequest(const profiler::ScriptFacts& facts) {
  // torchrun across machines is not this window's to start: it runs ranks on this one.
  if (!facts.command || facts.command->on_several_nodes()) return std::nullopt;
  const profiler::ScriptCommand& command = *facts.command;
  ScriptRunRequest r;
  r.module = command.module;
  r.python = QString::fromStdString(command.python);
  r.working_dir = QString::fromStdString(command.working_directory);
  r.script = QString::fromStdString(command.script);
  // A script given relative to where it ran; its arguments stay as given (they are read there too).
  if (!r.module && !r.working_dir.isEmpty()) r.script = QDir(r.working_dir).absoluteFilePath(r.script);
  for (const std::string& argument : command.arguments) r.arguments << QString::fromStdString(argument);
  for (const std::string& precision : facts.compared) r.compare << QString::fromStdString(precision);
  if (!r.comparing() && !facts.precision_override.empty())
    r.precision = QString::fromStdString(facts.precision_override);
  r.max_steps = static_cast<int>(facts.max_steps);
  r.capture = facts.capture;
  if (command.world_size > 1) r.nproc_per_node = static_cast<int>(command.local_world_size);
  return r;
}

std::optional<ScriptRunRequest> ScriptRunDialog::ask(QWidget* parent, const std::optional<ScriptRunRequest>& prefill) {
  ScriptRunDialog dialog(parent);
  if (prefill) {
    dialog.setRequest(*prefill);
    return dialog.answer(parent);
  }
  QSettings settings;
  ScriptRunRequest last;
  last.script = settings.value(kScriptKey).toString();
  last.arguments = settings.value(kArgumentsKey).toStringList();
  last.python = settings.value(kPythonKey).toString();
  last.precision = settings.value(kPrecisionKey, QStringLiteral("script")).toString();
  last.max_steps = settings.value(kMaxStepsKey, 0).toInt();
  last.module = settings.value(kModuleKey, false).toBool();
  last.working_dir = settings.value(kWorkingDirKey).toString();
  last.compare = settings.value(kCompareKey).toStringList();
  last.repeats = settings.value(kRepeatsKey, last.repeats).toInt();
  last.nproc_per_node = settings.value(kNprocKey, 0).toInt();
  settings.beginGroup(QLatin1String(kCaptureGroup));
  std::map<std::string, std::string> capture;
  for (const QString& key : settings.childKeys())
    capture[key.toStdString()] = settings.value(key).toString().toStdString();
  settings.endGroup();
  last.capture.read_meta(capture);  // what is not there (or damaged) stays at its default
  dialog.setRequest(last);
  return dialog.answer(parent);
}

std::optional<ScriptRunRequest> ScriptRunDialog::answer(QWidget* parent) {
  while (exec() == QDialog::Accepted) {
    std::optional<ScriptRunRequest> r = request();
    if (!r) continue;
    const QString replaced = r->comparing() ? tr("%1 exists. Replace it with this comparison?")
                                            : tr("%1 exists. Replace it with this run's session?");
    const QString first = r->sessionPaths().front();  // rank 0's under torchrun
    if (QFileInfo::exists(first) &&
        QMessageBox::question(parent, r->comparing() ? tr("Replace the comparison?") : tr("Replace the session?"),
                              replaced.arg(first)) != QMessageBox::Yes)
      continue;
    remember(*r);
    return r;
  }
  return std::nullopt;
}

}  // namespace ampscope::ui
