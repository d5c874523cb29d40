#include "ui/widgets/plot_fitting.h"

#include <qcustomplot.h>

#include <QFontMetrics>
#include <QStringList>
#include <algorithm>
#include <cmath>
#include <typeinfo>

namespace ampscope::ui {
namespace {

constexpr char kWatchedProperty[] = "ampscopeFittingWatch";
constexpr char kNoteTextProperty[] = "ampscopeNoteText";

int axisLength(const QCPAxis* axis) {
  const QCPAxisRect* rect = axis->axisRect();
  return axis->orientation() == Qt::Vertical ? rect->height() : rect->width();
}

// QCPAxisTickerText that writes every Nth label when all of them would overlap.
class FittingTextTicker : public QCPAxisTickerText {
 public:
  explicit FittingTextTicker(QCPAxis* axis) : axis_(axis) {}
  // Whether the axis's length changed since the ticks were last made.
  bool stale() const { return axisLength(axis_) != length_used_; }

 protected:
  QVector<double> createTickVector(double tick_step, const QCPRange& range) override {
    const QVector<double> all = QCPAxisTickerText::createTickVector(tick_step, range);
    length_used_ = axisLength(axis_);
    if (all.size() < 2 || length_used_ <= 0) return all;
    const QFontMetrics metrics(axis_->tickLabelFont());
    double room = 0;  // pixels one label needs along the axis, with a gap
    if (axis_->orientation() == Qt::Vertical) {
      room = metrics.height() + 2;
    } else {
      for (double tick : all) room = std::max<double>(room, metrics.horizontalAdvance(mTicks.value(tick)));
      room += metrics.horizontalAdvance(QLatin1Char(' ')) * 2;
    }
    const auto stride = static_cast<qsizetype>(
        std::max(1.0, std::ceil(static_cast<double>(all.size()) * room / length_used_)));
    QVector<double> written;
    for (qsizetype i = 0; i < all.size(); i += stride) written << all[i];
    return written;
  }

 private:
  QCPAxis* axis_;
  int length_used_ = -1;
};

QVector<QCPAxis*> plotAxes(QCustomPlot* plot) {
  QVector<QCPAxis*> axes;
  for (QCPAxisRect* rect : plot->axisRects())
    for (QCPAxis* axis : rect->axes()) axes << axis;
  return axes;
}

// A plain numeric axis along a short side: as many ticks as have room for their labels
// (QCustomPlot's default asks for 5 however short the axis; a 40-pixel histogram drew
// its counts over each other). Whether the count changed.
bool fitTickCount(QCPAxis* axis) {
  constexpr int kDefaultTickCount = 5;  // QCPAxisTicker's
  QCPAxisTicker* ticker = axis->ticker().data();
  if (!ticker || typeid(*ticker) != typeid(QCPAxisTicker) || axis->orientation() != Qt::Vertical) return false;
  const int label_height = QFontMetrics(axis->tickLabelFont()).height();
  const int wanted = std::clamp(axisLength(axis) / (2 * label_height), 1, kDefaultTickCount);
  if (ticker->tickCount() == wanted) return false;
  ticker->setTickCount(wanted);
  return true;
}

// After each layout: rewrap the notes to the rect's width, and replot once more where
// an axis's labels were made for another length (the layout comes after them).
void watchLayout(QCustomPlot* plot) {
  if (plot->property(kWatchedProperty).toBool()) return;
  plot->setProperty(kWatchedProperty, true);
  QObject::connect(plot, &QCustomPlot::afterLayout, plot, [plot] {
    bool again = false;
    for (QCPAxis* axis : plotAxes(plot)) {
      if (auto* ticker = dynamic_cast<FittingTextTicker*>(axis->ticker().data())) again |= ticker->stale();
      else if (axis->visible()) again |= fitTickCount(axis);
    }
    for (int i = 0; i < plot->itemCount(); ++i) {
      auto* note = qobject_cast<QCPItemText*>(plot->item(i));
      if (!note || !note->property(kNoteTextProperty).isValid()) continue;
      const QRect rect = note->clipAxisRect() ? note->clipAxisRect()->rect() : plot->rect();
      const QMargins pad = note->padding();
      const QFontMetrics metrics(note->font());
      const int width = rect.width() - pad.left() - pad.right() - 8;
      QStringList lines = wrapToWidth(plotNoteText(note), metrics, width).split(QLatin1Char('\n'));
      // At most 40 % of the plot's height: the rest of a long note is elided, not drawn over the data.
      const auto room = static_cast<qsizetype>(std::max(1, rect.height() * 2 / 5 / metrics.lineSpacing()));
      if (lines.size() > room) {
        const QString rest = QStringList(lines.begin() + room - 1, lines.end()).join(QLatin1Char(' '));
        lines.resize(room);
        lines.back() = metrics.elidedText(rest, Qt::ElideRight, width);
      }
      note->setText(lines.join(QLatin1Char('\n')));  // drawn after the layout: this replot shows it
    }
    if (again) plot->replot(QCustomPlot::rpQueuedReplot);
  });
}

}  // namespace

void setFittingTextTicks(QCPAxis* axis, const QVector<double>& ticks, const QVector<QString>& labels) {
  auto ticker = QSharedPointer<FittingTextTicker>::create(axis);
  ticker->setTicks(ticks, labels);
  axis->setTicker(ticker);
  watchLayout(axis->parentPlot());
}

QVector<QString> writtenTickLabels(const QCPAxis* axis) { return axis->tickVectorLabels(); }

void setPlotNote(QCPItemText* note, const QString& text) {
  note->setProperty(kNoteTextProperty, text);
  note->setText(text);
  watchLayout(note->parentPlot());
}

void keepTickLabelsApart(QCustomPlot* plot) { watchLayout(plot); }

QString plotNoteText(const QCPItemText* note) {
  const QVariant text = note->property(kNoteTextProperty);
  return text.isValid() ? text.toString() : note->text();
}

QString wrapToWidth(const QString& text, const QFontMetrics& metrics, int width) {
  QStringList lines;
  for (const QString& paragraph : text.split(QLatin1Char('\n'))) {
    QString line;
    for (const QString& word : paragraph.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
      const QString longer = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
      if (!line.isEmpty() && metrics.horizontalAdvance(longer) > width) {
        lines << line;
        line = word;
      } else {
        line = longer;
      }
    }
    lines << line;
  }
  return lines.join(QLatin1Char('\n'));
}

}  // namespace ampscope::ui
