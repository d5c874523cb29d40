#pragma once
// A summary of where op time went: a stacked bar by autocast category, a line with each
// category's share, and one with each compute precision's and each phase's.
#include <QWidget>

#include "ui/models/op_stats_model.h"

namespace ampscope::ui {

class CategoryStrip : public QWidget {
  Q_OBJECT
 public:
  explicit CategoryStrip(QWidget* parent = nullptr);
  void setTotals(const CategoryTotals& totals);
  // Both lines, one under the other.
  QString summaryText() const { return text_ + QLatin1Char('\n') + second_line_; }
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  CategoryTotals totals_;
  QString text_, second_line_;
};

}  // namespace ampscope::ui
