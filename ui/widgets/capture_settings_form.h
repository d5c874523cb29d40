#pragma once
// The capture's sampling as a form: which steps' ops are recorded, how often gradient
// and activation ranges are sampled (and their budget), precision readiness, and kernel
// tracing, one field per option of profiler::kCaptureOptions. The Run panel's Profiling
// group (the built-in training) and the Run-a-script dialog (`ampscope run`'s flags)
// are both this form, so a script is captured with the same choices, worded the same.
#include <QWidget>
#include <array>

#include "profiler/capture_settings.h"

class QCheckBox;
class QFormLayout;
class QSpinBox;

namespace ampscope::ui {

class CaptureSettingsForm : public QWidget {
  Q_OBJECT
 public:
  explicit CaptureSettingsForm(QWidget* parent = nullptr);

  profiler::CaptureSettings settings() const;
  // Counts outside a field's range are clamped to it.
  void setSettings(const profiler::CaptureSettings& settings);
  // Kernel tracing can be chosen (training on the CPU traces nothing).
  void setGpuTraceAvailable(bool available);
  // Only kernel tracing shown: a precision comparison sets each run's sampling itself.
  void setSamplingShown(bool shown);

 private:
  // The spin boxes in CaptureSettings::fields()' order.
  std::array<QSpinBox*, profiler::CaptureSettings::kFieldCount> countBoxes() const;
  void updateEnabledFields();

  QFormLayout* form_ = nullptr;
  QSpinBox* window_start_ = nullptr;
  QSpinBox* window_steps_ = nullptr;
  QSpinBox* every_n_steps_ = nullptr;
  QSpinBox* gradient_every_ = nullptr;
  QSpinBox* sample_budget_ = nullptr;
  QSpinBox* readiness_every_ = nullptr;
  QCheckBox* trace_gpu_ = nullptr;
};

}  // namespace ampscope::ui
