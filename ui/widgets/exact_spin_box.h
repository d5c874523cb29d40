#pragma once
// A double spin box that shows and keeps a value exactly as set: the shortest text that
// reads back as the same double ("1e-06", "0.0001", "16777216", "0.125"). QDoubleSpinBox
// rounds to fixed decimals, so a session recorded with --init-scale 1e-4 opened with an
// initial scale of 1 (0 decimals, clamped to the old minimum), and a learning rate of
// 1.5e-7 would read 0.000000. Loss scales and learning rates span orders of magnitude, so
// their steps multiply (setStepFactor: ×2 up, ÷2 down) rather than add.
#include <QDoubleSpinBox>

namespace ampscope::ui {

class ExactSpinBox : public QDoubleSpinBox {
 public:
  explicit ExactSpinBox(QWidget* parent = nullptr);
  // Each step multiplies (up) or divides (down) by `factor` (> 1); 0 adds singleStep().
  void setStepFactor(double factor) { step_factor_ = factor; }
  double stepFactor() const { return step_factor_; }

  QString textFromValue(double value) const override;
  double valueFromText(const QString& text) const override;
  QValidator::State validate(QString& input, int& pos) const override;
  void stepBy(int steps) override;

 protected:
  StepEnabled stepEnabled() const override;

 private:
  double step_factor_ = 0.0;
};

}  // namespace ampscope::ui
