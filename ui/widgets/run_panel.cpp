#include "ui/widgets/run_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "ui/models/formatting.h"
#include "ui/widgets/capture_settings_form.h"
#include "ui/widgets/exact_spin_box.h"
#include "ui/widgets/scroll_area.h"

namespace ampscope::ui {

using engine::RunState;

namespace {

QSpinBox* spin(int min, int max, const QString& tip, const QString& suffix = {}) {
  auto* s = new QSpinBox;
  s->setRange(min, max);
  s->setToolTip(tip);
  s->setSuffix(suffix);
  s->setAccelerated(true);
  return s;
}

template <typename Enum>
QComboBox* combo(std::initializer_list<std::pair<const char*, Enum>> items, const QString& tip) {
  auto* c = new QComboBox;
  for (const auto& [label, value] : items)
    c->addItem(QString::fromUtf8(label), static_cast<int>(value));
  c->setToolTip(tip);
  return c;
}

template <typename Enum>
Enum current(const QComboBox* c) {
  return static_cast<Enum>(c->currentData().toInt());
}

template <typename Enum>
void select(QComboBox* c, Enum value) {
  const int i = c->findData(static_cast<int>(value));
  if (i >= 0) c->setCurrentIndex(i);
}

QFormLayout* form(QWidget* box) {
  auto* layout = new QFormLayout(box);
  layout->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  layout->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
  layout->setContentsMargins(8, 6, 8, 6);
  layout->setVerticalSpacing(4);
  return layout;
}

}  // namespace

RunPanel::RunPanel(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->setSpacing(0);

  settings_ = new QWidget;
  auto* column = new QVBoxLayout(settings_);
  column->setContentsMargins(6, 6, 6, 6);
  column->setSpacing(6);
  script_facts_ = new QGroupBox(tr("Python script (recorded; read-only)"));
  script_facts_->setObjectName(QStringLiteral("scriptFacts"));
  script_facts_->setToolTip(tr("What ampscope run saw the script use. Start runs the built-in training, "
                               "with its own settings."));
  // The facts' rows, then the button that runs the script again (File → Run a Python script, filled in).
  auto* facts_column = new QVBoxLayout(script_facts_);
  facts_column->setContentsMargins(0, 0, 0, 6);
  auto* facts_rows = new QWidget;
  script_facts_form_ = form(facts_rows);
  facts_column->addWidget(facts_rows);
  rerun_script_ = new QPushButton(tr("Run this script again…"));
  rerun_script_->setObjectName(QStringLiteral("rerunScript"));
  connect(rerun_script_, &QPushButton::clicked, this, &RunPanel::rerunScriptRequested);
  facts_column->addWidget(rerun_script_, 0, Qt::AlignRight);
  script_facts_->hide();
  column->addWidget(script_facts_);
  setting_groups_ = {buildModelGroup(), buildDataGroup(), buildTrainingGroup(), buildScalerGroup(),
                     buildProfilingGroup()};
  for (QWidget* group : setting_groups_) column->addWidget(group);
  column->addStretch(1);

  QScrollArea* scroll = inScrollArea(settings_);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  outer->addWidget(scroll, 1);

  auto* controls = new QWidget;
  auto* buttons = new QGridLayout(controls);
  buttons->setContentsMargins(6, 6, 6, 6);
  start_ = new QPushButton(tr("Start"));
  pause_ = new QPushButton(tr("Pause"));
  resume_ = new QPushButton(tr("Resume"));
  stop_ = new QPushButton(tr("Stop"));
  start_->setObjectName(QStringLiteral("startButton"));
  pause_->setObjectName(QStringLiteral("pauseButton"));
  resume_->setObjectName(QStringLiteral("resumeButton"));
  stop_->setObjectName(QStringLiteral("stopButton"));
  start_->setToolTip(tr("Start a new run with these settings (F5)"));
  pause_->setToolTip(tr("Pause after the step in progress (F6)"));
  resume_->setToolTip(tr("Resume the paused run (F6)"));
  stop_->setToolTip(tr("End the run after the step in progress (Shift+F5)"));
  start_->setDefault(true);
  state_label_ = new QLabel;
  state_label_->setObjectName(QStringLiteral("runStateLabel"));
  state_label_->setAlignment(Qt::AlignCenter);
  buttons->addWidget(start_, 0, 0);
  buttons->addWidget(stop_, 0, 1);
  buttons->addWidget(pause_, 1, 0);
  buttons->addWidget(resume_, 1, 1);
  buttons->addWidget(state_label_, 2, 0, 1, 2);
  outer->addWidget(controls);

  connect(start_, &QPushButton::clicked, this, &RunPanel::startRequested);
  connect(pause_, &QPushButton::clicked, this, &RunPanel::pauseRequested);
  connect(resume_, &QPushButton::clicked, this, &RunPanel::resumeRequested);
  connect(stop_, &QPushButton::clicked, this, &RunPanel::stopRequested);

  setConfig(engine::TrainConfig{});
  setRunState(RunState::kIdle);
}

QWidget* RunPanel::buildModelGroup() {
  auto* box = new QGroupBox(tr("Model"));
  auto* f = form(box);
  model_ = combo<engine::ModelKind>({{"MLP", engine::ModelKind::kMLP},
                                     {"ConvNet (BN + residual)", engine::ModelKind::kConvNet},
                                     {"GPT decoder", engine::ModelKind::kGPT}},
                                    tr("The network to train"));
  layers_ = spin(1, 64, tr("Hidden layers (MLP), residual blocks (ConvNet), decoder blocks (GPT)"));
  width_ = spin(4, 8192, tr("Hidden width (MLP), channels (ConvNet), embedding size (GPT)"));
  heads_ = spin(1, 64, tr("GPT attention heads; the width must be a multiple of it"));
  seq_len_ = spin(2, 8192, tr("GPT context length in tokens"), tr(" tokens"));
  attention_ = combo<engine::AttentionKind>(
      {{"SDPA (fused)", engine::AttentionKind::kSDPA},
       {"written out (math)", engine::AttentionKind::kMath}},
      tr("GPT attention: one scaled_dot_product_attention op (flash / cuDNN / memory-efficient "
         "kernels on CUDA), or written out as matmul, masked_fill, softmax (kept in fp32 by "
         "autocast) and matmul, to see each op's autocast decision"));
  attention_->setObjectName(QStringLiteral("attentionCombo"));
  channels_last_ = new QCheckBox(tr("channels last (NHWC)"));
  channels_last_->setObjectName(QStringLiteral("channelsLastCheck"));
  channels_last_->setToolTip(tr("ConvNet: weights and input in channels_last memory format, "
                                "which Tensor Core convolutions want"));
  f->addRow(tr("Model"), model_);
  f->addRow(tr("Layers"), layers_);
  f->addRow(tr("Width"), width_);
  f->addRow(tr("Heads"), heads_);
  f->addRow(tr("Context"), seq_len_);
  f->addRow(tr("Attention"), attention_);
  f->addRow(tr("Layout"), channels_last_);
  connect(model_, &QComboBox::currentIndexChanged, this, &RunPanel::updateEnabledFields);
  return box;
}

QWidget* RunPanel::buildDataGroup() {
  auto* box = new QGroupBox(tr("Data"));
  auto* f = form(box);
  data_ = combo<engine::DataKind>({{"Synthetic", engine::DataKind::kSynthetic},
                                   {"MNIST (IDX)", engine::DataKind::kMNIST},
                                   {"CIFAR-10", engine::DataKind::kCIFAR10},
                                   {"Text corpus", engine::DataKind::kText},
                                   {"CSV table", engine::DataKind::kCSV}},
                                  tr("Where the samples come from; synthetic needs no files"));
  data_path_ = new QLineEdit;
  data_path_->setPlaceholderText(tr("file or directory"));
  browse_ = new QToolButton;
  browse_->setText(QStringLiteral("…"));
  browse_->setToolTip(tr("Choose the data file"));
  auto* row = new QHBoxLayout;
  row->setSpacing(2);
  row->addWidget(data_path_, 1);
  row->addWidget(browse_);
  f->addRow(tr("Source"), data_);
  f->addRow(tr("Path"), row);
  connect(browse_, &QToolButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Data file"), data_path_->text());
    if (!path.isEmpty()) data_path_->setText(path);
  });
  connect(data_, &QComboBox::currentIndexChanged, this, &RunPanel::updateEnabledFields);
  return box;
}

QWidget* RunPanel::buildTrainingGroup() {
  auto* box = new QGroupBox(tr("Training"));
  auto* f = form(box);
  precision_ = combo<engine::Precision>({{"fp32", engine::Precision::kFP32},
                                         {"fp16 autocast", engine::Precision::kFP16},
                                         {"bf16 autocast", engine::Precision::kBF16}},
                                        glossary::formatDescription(profiler::FloatFormat::fp16) +
                                            QLatin1Char('\n') +
                                            glossary::formatDescription(profiler::FloatFormat::bf16));
  device_ =
      combo<engine::DeviceChoice>({{"auto", engine::DeviceChoice::kAuto},
                                   {"CPU", engine::DeviceChoice::kCPU},
                                   {"CUDA", engine::DeviceChoice::kCUDA}},
                                  tr("auto: the first CUDA GPU if there is one, else the CPU"));
  batch_ = spin(1, 65536, tr("Samples per micro-batch"));
  accumulate_ = spin(1, 1024, tr("Micro-batches per optimizer step (gradient accumulation)"));
  lr_ = new ExactSpinBox;
  lr_->setObjectName(QStringLiteral("learningRate"));
  lr_->setRange(1e-12, 10.0);
  lr_->setStepFactor(2.0);
  lr_->setToolTip(tr("Peak learning rate (the arrows double or halve it)"));
  optimizer_ = combo<engine::OptimizerKind>({{"AdamW", engine::OptimizerKind::kAdamW},
                                             {"Adam", engine::OptimizerKind::kAdam},
                                             {"SGD (momentum)", engine::OptimizerKind::kSGD}},
                                            tr("The optimizer"));
  fused_ = new QCheckBox(tr("fused"));
  fused_->setObjectName(QStringLiteral("fusedOptimizerCheck"));
  fused_->setToolTip(tr("One fused kernel per step (_fused_adamw_ and kin) instead of "
                        "multi-tensor (foreach) updates"));
  schedule_ = combo<engine::ScheduleKind>(
      {{"constant", engine::ScheduleKind::kConstant}, {"cosine", engine::ScheduleKind::kCosine}},
      tr("Learning-rate schedule"));
  recipe_ = combo<engine::RecipeKind>(
      {{"standard", engine::RecipeKind::kStandard},
       {"multi-loss (2 models, 1 scaler)", engine::RecipeKind::kMultiLoss},
       {"gradient penalty", engine::RecipeKind::kGradientPenalty},
       {"custom autograd functions", engine::RecipeKind::kCustomFunction}},
      tr("The step's AMP pattern, after PyTorch's AMP examples: two models, losses and optimizers "
         "under one scaler (each optimizer skips on its own); a gradient penalty from the scaled "
         "loss; custom autograd Functions, one forced to fp32 (custom_fwd(cast_inputs=float32))"));
  recipe_->setObjectName(QStringLiteral("recipeCombo"));
  steps_ = spin(1, 10'000'000, tr("Optimizer steps"));
  seed_ = spin(0, 1'000'000, tr("Random seed of the model and the data"));
  f->addRow(tr("Precision"), precision_);
  f->addRow(tr("Device"), device_);
  f->addRow(tr("Batch"), batch_);
  f->addRow(tr("Accumulate"), accumulate_);
  f->addRow(tr("LR"), lr_);
  auto* optimizer_row = new QHBoxLayout;
  optimizer_row->setSpacing(4);
  optimizer_row->addWidget(optimizer_, 1);
  optimizer_row->addWidget(fused_);
  f->addRow(tr("Optimizer"), optimizer_row);
  f->addRow(tr("Schedule"), schedule_);
  f->addRow(tr("Recipe"), recipe_);
  f->addRow(tr("Steps"), steps_);
  f->addRow(tr("Seed"), seed_);
  connect(precision_, &QComboBox::currentIndexChanged, this, &RunPanel::updateEnabledFields);
  return box;
}

QWidget* RunPanel::buildScalerGroup() {
  auto* box = new QGroupBox(tr("Loss scaler"));
  box->setToolTip(QString::fromLatin1(glossary::kLossScale));
  auto* f = form(box);
  scaler_mode_ = new QComboBox;
  scaler_mode_->addItem(tr("auto (on for fp16)"), -1);
  scaler_mode_->addItem(tr("on"), 1);
  scaler_mode_->addItem(tr("off"), 0);
  scaler_mode_->setToolTip(QString::fromLatin1(glossary::kLossScale));
  init_scale_ = new ExactSpinBox;
  init_scale_->setObjectName(QStringLiteral("initScale"));
  // Any positive float32 (the scale is a float32 tensor, as GradScaler's), as the CLI takes.
  init_scale_->setRange(FLT_MIN, FLT_MAX);
  init_scale_->setStepFactor(2.0);
  init_scale_->setToolTip(tr("The scale of the first step (torch default 65536 = 2^16; the arrows double or halve it)"));
  growth_factor_ = new ExactSpinBox;
  growth_factor_->setObjectName(QStringLiteral("growthFactor"));
  growth_factor_->setRange(1.0, 16.0);
  growth_factor_->setSingleStep(0.5);
  growth_factor_->setToolTip(tr("Multiplies the scale after a run of good steps"));
  backoff_factor_ = new ExactSpinBox;
  backoff_factor_->setObjectName(QStringLiteral("backoffFactor"));
  backoff_factor_->setRange(0.01, 0.99);
  backoff_factor_->setSingleStep(0.05);
  backoff_factor_->setToolTip(tr("Multiplies the scale after an overflow"));
  growth_interval_ = spin(1, 1'000'000, tr("Good steps in a row before the scale grows"));
  f->addRow(tr("Scaler"), scaler_mode_);
  f->addRow(tr("Initial scale"), init_scale_);
  f->addRow(tr("Growth ×"), growth_factor_);
  f->addRow(tr("Backoff ×"), backoff_factor_);
  f->addRow(tr("Growth interval"), growth_interval_);
  connect(scaler_mode_, &QComboBox::currentIndexChanged, this, &RunPanel::updateEnabledFields);
  return box;
}

QWidget* RunPanel::buildProfilingGroup() {
  auto* box = new QGroupBox(tr("Profiling"));
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(8, 6, 8, 6);
  capture_form_ = new CaptureSettingsForm;
  layout->addWidget(capture_form_);
  connect(device_, &QComboBox::currentIndexChanged, this, &RunPanel::updateEnabledFields);  // kernel tracing
  return box;
}

profiler::CaptureSettings RunPanel::captureSettings() const { return capture_form_->settings(); }

void RunPanel::setCaptureSettings(const profiler::CaptureSettings& s) { capture_form_->setSettings(s); }

void RunPanel::updateEnabledFields() {
  const auto model = current<engine::ModelKind>(model_);
  heads_->setEnabled(model == engine::ModelKind::kGPT);
  seq_len_->setEnabled(model == engine::ModelKind::kGPT);
  attention_->setEnabled(model == engine::ModelKind::kGPT);
  channels_last_->setEnabled(model == engine::ModelKind::kConvNet);
  const bool needs_path = current<engine::DataKind>(data_) != engine::DataKind::kSynthetic;
  data_path_->setEnabled(needs_path);
  browse_->setEnabled(needs_path);
  const int mode = scaler_mode_->currentData().toInt();
  const bool scaler =
      mode < 0 ? current<engine::Precision>(precision_) == engine::Precision::kFP16 : mode == 1;
  for (QWidget* w :
       {static_cast<QWidget*>(init_scale_), static_cast<QWidget*>(growth_factor_),
        static_cast<QWidget*>(backoff_factor_), static_cast<QWidget*>(growth_interval_)})
    w->setEnabled(scaler);
  capture_form_->setGpuTraceAvailable(current<engine::DeviceChoice>(device_) != engine::DeviceChoice::kCPU);
}

engine::TrainConfig RunPanel::config() const {
  engine::TrainConfig c = base_;
  c.model.kind = current<engine::ModelKind>(model_);
  c.model.layers = layers_->value();
  c.model.width = width_->value();
  c.model.heads = heads_->value();
  c.model.seq_len = seq_len_->value();
  c.model.attention = current<engine::AttentionKind>(attention_);
  c.model.channels_last = c.model.kind == engine::ModelKind::kConvNet && channels_last_->isChecked();
  c.data.kind = current<engine::DataKind>(data_);
  // The engine rejects a path for synthetic data; the field keeps it for a switch back.
  c.data.path = c.data.kind == engine::DataKind::kSynthetic
                    ? std::string()
                    : data_path_->text().trimmed().toStdString();
  c.precision = current<engine::Precision>(precision_);
  c.device = current<engine::DeviceChoice>(device_);
  c.batch_size = batch_->value();
  c.accumulation_steps = accumulate_->value();
  c.optim.lr = lr_->value();
  c.optim.kind = current<engine::OptimizerKind>(optimizer_);
  c.optim.fused = fused_->isChecked();
  c.optim.schedule = current<engine::ScheduleKind>(schedule_);
  if (c.optim.schedule != engine::ScheduleKind::kCosine) c.optim.warmup_steps = 0;
  c.recipe = current<engine::RecipeKind>(recipe_);
  c.steps = steps_->value();
  c.seed = static_cast<uint64_t>(seed_->value());
  const int mode = scaler_mode_->currentData().toInt();
  c.use_scaler = mode < 0 ? std::nullopt : std::optional<bool>(mode == 1);
  c.scaler.init_scale = init_scale_->value();
  c.scaler.growth_factor = growth_factor_->value();
  c.scaler.backoff_factor = backoff_factor_->value();
  c.scaler.growth_interval = growth_interval_->value();
  return c;
}

void RunPanel::setConfig(const engine::TrainConfig& c) {
  base_ = c;
  select(model_, c.model.kind);
  layers_->setValue(static_cast<int>(c.model.layers));
  width_->setValue(static_cast<int>(c.model.width));
  heads_->setValue(static_cast<int>(c.model.heads));
  seq_len_->setValue(static_cast<int>(c.model.seq_len));
  select(attention_, c.model.attention);
  select(recipe_, c.recipe);
  channels_last_->setChecked(c.model.channels_last);
  select(data_, c.data.kind);
  data_path_->setText(QString::fromStdString(c.data.path));
  select(precision_, c.precision);
  select(device_, c.device);
  batch_->setValue(static_cast<int>(c.batch_size));
  accumulate_->setValue(static_cast<int>(c.accumulation_steps));
  lr_->setValue(c.optim.lr);
  select(optimizer_, c.optim.kind);
  fused_->setChecked(c.optim.fused);
  select(schedule_, c.optim.schedule);
  steps_->setValue(static_cast<int>(std::min<int64_t>(c.steps, steps_->maximum())));
  seed_->setValue(static_cast<int>(c.seed));
  scaler_mode_->setCurrentIndex(
      scaler_mode_->findData(c.use_scaler ? (*c.use_scaler ? 1 : 0) : -1));
  init_scale_->setValue(c.scaler.init_scale);
  growth_factor_->setValue(c.scaler.growth_factor);
  backoff_factor_->setValue(c.scaler.backoff_factor);
  growth_interval_->setValue(static_cast<int>(c.scaler.growth_interval));
  updateEnabledFields();
}

void RunPanel::showScriptFacts(const profiler::ScriptFacts& facts) {
  while (script_facts_form_->rowCount() > 0) script_facts_form_->removeRow(0);
  for (const auto& [label, value] : profiler::fact_rows(facts)) {
    auto* text = new QLabel(QString::fromStdString(value));
    text->setWordWrap(true);
    text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    script_facts_form_->addRow(QString::fromStdString(label), text);
  }
  shown_facts_ = facts;
  const bool across_machines = facts.command && facts.command->on_several_nodes();
  rerun_script_->setEnabled(facts.command && !across_machines);
  rerun_script_->setToolTip(
      across_machines ? tr("It ran as %1 ranks of torchrun on %2 machines: run it again there (this window starts "
                           "ranks on this machine only)")
                            .arg(facts.command->world_size)
                            .arg(facts.command->world_size / facts.command->local_world_size)
      : facts.command ? tr("File → Run a Python script…, filled in as the script ran: the same Python, directory, "
                           "arguments, precision, sampling and kernel tracing, and as many torchrun ranks")
                      : tr("This file does not say how the script ran (written before ampscope recorded it, or by a "
                           "script that imported ampscope itself)"));
  for (QWidget* group : setting_groups_) group->hide();
  script_facts_->show();
}

void RunPanel::showSettings() {
  shown_facts_.reset();
  script_facts_->hide();
  for (QWidget* group : setting_groups_) group->show();
}

bool RunPanel::showsScriptFacts() const { return !script_facts_->isHidden(); }

void RunPanel::setSessionState(const QString& text) { state_label_->setText(text); }

QString RunPanel::stateText() const { return state_label_->text(); }

void RunPanel::setRunState(RunState state, bool pause_pending) {
  const bool active = state == RunState::kRunning || state == RunState::kPaused;
  if (active) showSettings();  // the run trains with these
  start_->setEnabled(!active);
  stop_->setEnabled(active);
  pause_->setEnabled(state == RunState::kRunning && !pause_pending);
  resume_->setEnabled(state == RunState::kPaused || pause_pending);
  settings_->setEnabled(!active);
  QString text;
  switch (state) {
    case RunState::kIdle:
      text = tr("Ready");
      break;
    case RunState::kRunning:
      text = pause_pending ? tr("Pausing after this step…") : tr("Running");
      break;
    case RunState::kPaused:
      text = tr("Paused");
      break;
    case RunState::kFinished:
      text = tr("Finished — ready for a new run");
      break;
    case RunState::kStopped:
      text = tr("Stopped — ready for a new run");
      break;
    case RunState::kFailed:
      text = tr("Failed — ready for a new run");
      break;
  }
  state_label_->setText(text);
}

}  // namespace ampscope::ui
