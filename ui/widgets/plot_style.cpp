#include "ui/widgets/plot_style.h"

#include <qcustomplot.h>

#include <cmath>
#include <functional>

#include "ui/widgets/plot_fitting.h"

namespace ampscope::ui {
namespace {

// Powers of two written as 2¹⁶, the way loss scales are talked about.
class Log2Ticker : public QCPAxisTickerLog {
 public:
  Log2Ticker() {
    setLogBase(2);
    setSubTickCount(0);
  }

 protected:
  QString getTickLabel(double tick, const QLocale& locale, QChar format, int precision) override {
    static const QString digits = QStringLiteral("⁰¹²³⁴⁵⁶⁷⁸⁹");
    const double e = std::log2(tick);
    if (std::abs(e - std::round(e)) > 1e-6)
      return QCPAxisTickerLog::getTickLabel(tick, locale, format, precision);
    const int n = static_cast<int>(std::lround(e));
    QString sup = n < 0 ? QStringLiteral("⁻") : QString();
    for (QChar c : QString::number(std::abs(n))) sup += digits[c.digitValue()];
    return QStringLiteral("2") + sup;
  }
};

}  // namespace

void useLog2Axis(QCPAxis* axis) {
  axis->setScaleType(QCPAxis::stLogarithmic);
  axis->setTicker(QSharedPointer<Log2Ticker>::create());
}


bool isDark(const QPalette& palette) { return palette.color(QPalette::Window).lightness() < 128; }

SeriesColors seriesColors(const QPalette& palette) {
  if (isDark(palette))
    return {QColor(0x5a, 0xa9, 0xf0),    QColor(0xf2, 0x9e, 0x4c), QColor(0x6c, 0xd4, 0x8c),
            QColor(0xc3, 0x8b, 0xf0),    QColor(0xf0, 0xc0, 0x40), QColor(0xff, 0x5c, 0x5c),
            QColor(0x5a, 0xa9, 0xf0, 70)};
  return {QColor(0x1f, 0x6f, 0xc4),    QColor(0xe0, 0x6c, 0x10), QColor(0x22, 0x8b, 0x4a),
          QColor(0x7b, 0x3f, 0xbf),    QColor(0xc8, 0x8a, 0x00), QColor(0xd0, 0x20, 0x20),
          QColor(0x1f, 0x6f, 0xc4, 60)};
}

void styleAxis(QCPAxis* axis, const QPalette& palette) {
  const QColor text = palette.color(QPalette::WindowText);
  QColor grid = text;
  grid.setAlpha(isDark(palette) ? 40 : 30);
  QColor line = text;
  line.setAlpha(140);
  axis->setBasePen(QPen(line, 1));
  axis->setTickPen(QPen(line, 1));
  axis->setSubTickPen(QPen(line, 1));
  axis->setTickLabelColor(text);
  axis->setLabelColor(text);
  axis->grid()->setPen(QPen(grid, 1, Qt::SolidLine));
  QColor subgrid = grid;
  subgrid.setAlpha(grid.alpha() / 2);
  axis->grid()->setSubGridPen(QPen(subgrid, 1, Qt::DotLine));
  axis->grid()->setZeroLinePen(Qt::NoPen);
  QFont font = axis->tickLabelFont();
  font.setPointSizeF(8.5);
  axis->setTickLabelFont(font);
  QFont label = axis->labelFont();
  label.setPointSizeF(8.5);
  axis->setLabelFont(label);
  axis->setTickLengthIn(0);
  axis->setTickLengthOut(3);
  axis->setSubTickLengthIn(0);
  axis->setSubTickLengthOut(0);
}

void applyPlotStyle(QCustomPlot* plot, const QPalette& palette) {
  keepTickLabelsApart(plot);
  plot->setBackground(palette.color(QPalette::Base));
  for (QCPAxisRect* rect : plot->axisRects()) {
    rect->setBackground(palette.color(QPalette::Base));
    for (QCPAxis* axis : rect->axes()) styleAxis(axis, palette);
  }
  if (plot->legend) {
    plot->legend->setBrush(QColor(palette.color(QPalette::Base).red(),
                                  palette.color(QPalette::Base).green(),
                                  palette.color(QPalette::Base).blue(), 200));
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setTextColor(palette.color(QPalette::WindowText));
    QFont font = plot->legend->font();
    font.setPointSizeF(8);
    plot->legend->setFont(font);
  }
  std::function<void(QCPLayout*)> color_titles = [&](QCPLayout* layout) {
    for (int i = 0; i < layout->elementCount(); ++i) {
      if (auto* title = qobject_cast<QCPTextElement*>(layout->elementAt(i)))
        title->setTextColor(palette.color(QPalette::WindowText));
      else if (auto* grid = qobject_cast<QCPLayoutGrid*>(layout->elementAt(i)))
        color_titles(grid);
    }
  };
  color_titles(plot->plotLayout());
}

void addPlotTitle(QCustomPlot* plot, const QString& title) {
  plot->plotLayout()->insertRow(0);
  auto* element = new QCPTextElement(plot, title);
  QFont font = element->font();
  font.setPointSizeF(9.5);
  font.setBold(true);
  element->setFont(font);
  element->setTextFlags(Qt::AlignLeft | Qt::AlignVCenter);
  element->setMargins(QMargins(12, 4, 0, 0));
  plot->plotLayout()->addElement(0, 0, element);
}

}  // namespace ampscope::ui

namespace ampscope::ui {

void moveLegendToTitleRow(QCustomPlot* plot) {
  auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0));
  if (!title) return;
  plot->plotLayout()->take(title);
  auto* header = new QCPLayoutGrid;
  plot->plotLayout()->addElement(0, 0, header);
  header->setMargins(QMargins(0, 0, 0, 0));
  header->addElement(0, 0, title);
  plot->axisRect()->insetLayout()->take(plot->legend);
  header->addElement(0, 1, plot->legend);
  plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  plot->legend->setMargins(QMargins(4, 2, 8, 0));
  plot->legend->setRowSpacing(0);
  plot->legend->setColumnSpacing(10);
  plot->legend->setIconSize(16, 8);
  // The legend keeps its natural width; the title takes the rest of the row.
  header->setColumnStretchFactors({1.0, 0.0001});
  plot->plotLayout()->setRowSpacing(0);
}

}  // namespace ampscope::ui
