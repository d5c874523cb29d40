#include "ui/widgets/category_strip.h"

#include <QPainter>
#include <QStringList>

#include "ui/models/formatting.h"

namespace ampscope::ui {
namespace {

QString share(int64_t part, int64_t total) {
  return QStringLiteral("%1 %").arg(
      total > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(total) : 0.0, 0, 'f', 0);
}

}  // namespace

CategoryStrip::CategoryStrip(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  QStringList tips;
  for (int i = 0; i < kCategoryCount; ++i) tips << categoryTooltip(categoryAt(i));
  setToolTip(tips.join(QLatin1Char('\n')));
}

QSize CategoryStrip::sizeHint() const { return {400, fontMetrics().height() * 3 + 18}; }

void CategoryStrip::setTotals(const CategoryTotals& totals) {
  totals_ = totals;
  QStringList parts;
  for (int i = 0; i < kCategoryCount; ++i)
    if (totals.time_ns[i] > 0)
      parts << QStringLiteral("%1 %2").arg(categoryLabel(categoryAt(i)),
                                           share(totals.time_ns[i], totals.total_ns));
  QStringList precisions;
  if (totals.bf16_ns > 0)
    precisions << QStringLiteral("bf16 ") + share(totals.bf16_ns, totals.total_ns);
  if (totals.fp16_ns > 0)
    precisions << QStringLiteral("fp16 ") + share(totals.fp16_ns, totals.total_ns);
  if (totals.fp32_ns > 0)
    precisions << QStringLiteral("fp32 ") + share(totals.fp32_ns, totals.total_ns);
  if (totals.other_ns > 0) precisions << tr("other ") + share(totals.other_ns, totals.total_ns);
  text_ = tr("%1 time %2 (%3) — %4")
              .arg(totals.gpu ? tr("GPU") : tr("CPU"), formatDuration(totals.total_ns),
                   totals.top_level_only ? tr("top-level ops") : tr("inclusive, nested ops count twice"),
                   parts.join(QStringLiteral(" · ")));
  int64_t phases_ns = 0;
  for (const auto& [phase, ns] : totals.phase_ns) phases_ns += ns;
  QStringList phases;
  for (const auto& [phase, ns] : totals.phase_ns)
    if (ns > 0) phases << phaseLabel(phase) + QLatin1Char(' ') + share(ns, phases_ns);
  second_line_ = tr("computed in %1").arg(precisions.join(QStringLiteral(" · ")));
  if (!phases.isEmpty()) second_line_ += tr(" — by phase: %1").arg(phases.join(QStringLiteral(" · ")));
  update();
}

void CategoryStrip::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const int bar_h = 10;
  QRectF bar(4, 4, width() - 8, bar_h);
  p.setPen(Qt::NoPen);
  p.setBrush(palette().color(QPalette::AlternateBase));
  p.drawRoundedRect(bar, 3, 3);
  if (totals_.total_ns > 0) {
    double x = bar.left();
    for (int i = 0; i < kCategoryCount; ++i) {
      const double w = bar.width() * static_cast<double>(totals_.time_ns[i]) /
                       static_cast<double>(totals_.total_ns);
      if (w <= 0) continue;
      p.setBrush(categoryColor(categoryAt(i)));
      p.drawRect(QRectF(x, bar.top(), w, bar.height()));
      x += w;
    }
  }
  p.setPen(palette().color(QPalette::WindowText));
  const QRect text_rect(4, bar_h + 8, width() - 8, fontMetrics().height() + 2);
  p.drawText(text_rect, Qt::AlignLeft | Qt::AlignVCenter,
             fontMetrics().elidedText(text_.isEmpty() ? tr("no op time recorded yet") : text_,
                                      Qt::ElideRight, text_rect.width()));
  if (text_.isEmpty()) return;
  const QRect second_rect = text_rect.translated(0, text_rect.height());
  p.drawText(second_rect, Qt::AlignLeft | Qt::AlignVCenter,
             fontMetrics().elidedText(second_line_, Qt::ElideRight, second_rect.width()));
}

}  // namespace ampscope::ui
