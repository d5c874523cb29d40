#include "ui/widgets/capture_settings_form.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QSpinBox>
#include <algorithm>

namespace ampscope::ui {

namespace {

QSpinBox* count_box(const profiler::CaptureOptionSpec& option, int max, const QString& tip, const char* name) {
  auto* s = new QSpinBox;
  s->setRange(static_cast<int>(option.minimum), max);
  s->setToolTip(tip);
  s->setAccelerated(true);
  s->setObjectName(QLatin1String(name));
  return s;
}

}  // namespace

CaptureSettingsForm::CaptureSettingsForm(QWidget* parent) : QWidget(parent) {
  every_n_steps_ = count_box(profiler::kEveryOption, 1'000'000,
                             tr("Record the ops of every Nth step inside the window "
                                "(1 = every step; more steps cost more overhead)"),
                             "profileEveryNSteps");
  every_n_steps_->setPrefix(tr("1 step in "));  // reads right for every N, 1 included
  gradient_every_ = count_box(profiler::kGradEveryOption, 1'000'000,
                              tr("Sample gradient range statistics (log2|g| against "
                                 "fp16's limits) every K steps; 0 = off"),
                              "profileGradientEvery");
  gradient_every_->setPrefix(tr("every "));
  gradient_every_->setSuffix(tr(" steps"));
  gradient_every_->setSpecialValueText(tr("off"));
  // Both act on the range samples: off with them (updateEnabledFields).
  sample_budget_ = count_box(profiler::kSampleBudgetOption, 100,
                             tr("Space the gradient samples past every K steps (in multiples of K) so that they "
                                "cost at most this share of the run's time; off = every K steps, whatever they cost"),
                             "profileSampleBudget");
  sample_budget_->setPrefix(tr("at most "));
  sample_budget_->setSuffix(tr(" % of the run"));
  sample_budget_->setSpecialValueText(tr("off: every K steps"));
  readiness_every_ = count_box(profiler::kReadinessEveryOption, 1'000'000,
                               tr("Precision readiness (FP8, MXFP8, NVFP4 per layer) on the first gradient sample "
                                  "and one in N after it; it costs most of a sample's time; 0 = off"),
                               "profileReadinessEvery");
  readiness_every_->setPrefix(tr("1 sample in "));
  readiness_every_->setSpecialValueText(tr("off"));
  window_start_ =
      count_box(profiler::kWindowStartOption, 10'000'000, tr("The first step whose ops are recorded"),
                "profileWindowStart");
  window_steps_ = count_box(profiler::kWindowStepsOption, 10'000'000,
                            tr("How many steps from the first one; 0 = to the end"), "profileWindowSteps");
  window_steps_->setSuffix(tr(" steps"));
  window_steps_->setSpecialValueText(tr("to the end"));
  trace_gpu_ = new QCheckBox(tr("trace (CUPTI)"));
  trace_gpu_->setToolTip(tr("Trace the CUDA kernels of the recorded steps through CUPTI, each joined to the op "
                            "that launched it; off, ops are timed on the CPU. Training on the CPU traces nothing."));
  trace_gpu_->setObjectName(QStringLiteral("profileTraceGpu"));
  form_ = new QFormLayout(this);
  form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form_->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
  form_->setContentsMargins(0, 0, 0, 0);
  form_->setVerticalSpacing(4);
  form_->addRow(tr("Ops"), every_n_steps_);
  form_->addRow(tr("Gradients"), gradient_every_);
  form_->addRow(tr("Sample budget"), sample_budget_);
  form_->addRow(tr("Readiness"), readiness_every_);
  form_->addRow(tr("From step"), window_start_);
  form_->addRow(tr("Window"), window_steps_);
  form_->addRow(tr("GPU kernels"), trace_gpu_);
  connect(gradient_every_, &QSpinBox::valueChanged, this, &CaptureSettingsForm::updateEnabledFields);
  setSettings(profiler::CaptureSettings{});
}

std::array<QSpinBox*, profiler::CaptureSettings::kFieldCount> CaptureSettingsForm::countBoxes() const {
  return {window_start_, window_steps_, every_n_steps_, gradient_every_, sample_budget_, readiness_every_};
}

profiler::CaptureSettings CaptureSettingsForm::settings() const {
  profiler::CaptureSettings s;
  const auto boxes = countBoxes();
  const auto fields = s.fields();
  for (size_t i = 0; i < fields.size(); ++i) *fields[i].value = boxes[i]->value();
  s.trace_gpu = trace_gpu_->isChecked();
  return s;
}

void CaptureSettingsForm::setSettings(const profiler::CaptureSettings& s) {
  const auto boxes = countBoxes();
  const auto fields = s.fields();
  for (size_t i = 0; i < fields.size(); ++i)
    boxes[i]->setValue(
        static_cast<int>(std::clamp<int64_t>(*fields[i].value, boxes[i]->minimum(), boxes[i]->maximum())));
  trace_gpu_->setChecked(s.trace_gpu);
  updateEnabledFields();
}

void CaptureSettingsForm::setGpuTraceAvailable(bool available) { trace_gpu_->setEnabled(available); }

void CaptureSettingsForm::setSamplingShown(bool shown) {
  for (QSpinBox* box : countBoxes()) form_->setRowVisible(box, shown);
}

void CaptureSettingsForm::updateEnabledFields() {
  const bool range_samples = gradient_every_->value() > 0;
  sample_budget_->setEnabled(range_samples);
  readiness_every_->setEnabled(range_samples);
}

}  // namespace ampscope::ui
