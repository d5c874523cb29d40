#pragma once
// A one-line summary of where op time went: a stacked bar by autocast category
// and a legend with each category's and each compute precision's share.
#include <QWidget>

#include "ui/models/op_stats_model.h"

namespace ampscope::ui {

class CategoryStrip : public QWidget {
  Q_OBJECT
 public:
  explicit CategoryStrip(QWidget* parent = nullptr);
  void setTotals(const CategoryTotals& totals);
  QString summaryText() const { return text_; }
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  CategoryTotals totals_;
  QString text_;
};

}  // namespace ampscope::ui
