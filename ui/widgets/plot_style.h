#pragma once
// One look for every plot, derived from the application palette so the plots
// follow the system's light or dark scheme (Qt 6.4 has no QStyleHints::colorScheme,
// so "dark" means the window color is darker than mid-grey).
#include <QColor>
#include <QPalette>

class QCustomPlot;
class QCPAxis;

namespace ampscope::ui {

bool isDark(const QPalette& palette);

// Series colors chosen to stay distinct on both backgrounds.
struct SeriesColors {
  QColor primary, secondary, tertiary, accent, warning, danger, faint;
};
SeriesColors seriesColors(const QPalette& palette);

// Background, axes, grid, fonts and legend of a plot; call again on palette changes.
void applyPlotStyle(QCustomPlot* plot, const QPalette& palette);
void styleAxis(QCPAxis* axis, const QPalette& palette);
// A log axis with ticks at powers of two, written 2¹⁶: how loss scales are talked about.
void useLog2Axis(QCPAxis* axis);

// A title row above the axis rect.
void addPlotTitle(QCustomPlot* plot, const QString& title);
// Moves the legend out of the axis rect into the title row, right of the title and
// in one line, so it never covers data.
void moveLegendToTitleRow(QCustomPlot* plot);

}  // namespace ampscope::ui
