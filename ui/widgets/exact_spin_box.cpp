#include "ui/widgets/exact_spin_box.h"

#include <QLocale>
#include <QRegularExpression>
#include <array>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace ampscope::ui {

ExactSpinBox::ExactSpinBox(QWidget* parent) : QDoubleSpinBox(parent) {
  // QDoubleSpinBox rounds every value to its decimals; with the most it allows, a double
  // keeps all its digits, and textFromValue below decides what is shown.
  setDecimals(DBL_MAX_10_EXP + DBL_DIG);
}

// The CLI's notation in any locale (a flag's value reads the same here): the shortest
// digits that read back as the same double, fixed from 1e-4 to below 1e16 and scientific
// outside, as Python prints a float ("0.0001", "1073741824", "1.5e-07").
QString ExactSpinBox::textFromValue(double value) const {
  std::array<char, 64> text{};
  char* const first = text.data();
  char* const last = text.data() + text.size();
  char* end = std::to_chars(first, last, value, std::chars_format::scientific).ptr;
  const std::string_view scientific(first, static_cast<size_t>(end - first));
  const size_t e = scientific.find('e');
  const int exponent = e == std::string_view::npos ? 0 : std::atoi(scientific.data() + e + 1);
  if (value != 0 && (exponent < -4 || exponent >= 16)) return QString::fromLatin1(first, end - first);
  end = std::to_chars(first, last, value, std::chars_format::fixed).ptr;
  return QString::fromLatin1(first, end - first);
}

double ExactSpinBox::valueFromText(const QString& text) const {
  bool ok = false;
  const double value = QLocale::c().toDouble(text.trimmed(), &ok);
  return ok ? value : this->value();
}

QValidator::State ExactSpinBox::validate(QString& input, int& /*pos*/) const {
  const QString text = input.trimmed();
  bool ok = false;
  const double value = QLocale::c().toDouble(text, &ok);
  if (ok && std::isfinite(value)) return value >= minimum() && value <= maximum() ? QValidator::Acceptable
                                                                                   : QValidator::Intermediate;
  // On the way to a number: "", "0.", "1e", "1e-".
  static const QRegularExpression partial(QStringLiteral(R"(^\+?\d*(\.\d*)?([eE][+-]?\d*)?$)"));
  return partial.match(text).hasMatch() ? QValidator::Intermediate : QValidator::Invalid;
}

void ExactSpinBox::stepBy(int steps) {
  if (step_factor_ <= 1.0) return QDoubleSpinBox::stepBy(steps);
  setValue(value() * std::pow(step_factor_, steps));  // setValue clamps to the range
  selectAll();
}

QAbstractSpinBox::StepEnabled ExactSpinBox::stepEnabled() const {
  if (step_factor_ <= 1.0) return QDoubleSpinBox::stepEnabled();
  if (isReadOnly()) return StepNone;
  StepEnabled enabled = StepNone;
  if (value() < maximum()) enabled |= StepUpEnabled;
  if (value() > minimum()) enabled |= StepDownEnabled;
  return enabled;
}

}  // namespace ampscope::ui
