#pragma once
// Text that fits the plot it is drawn in, whatever the window's size. The panes share
// a dock with little height: twenty parameter names on a 60-pixel axis were drawn on
// top of each other, and a one-line note wider than its plot was cut off at both ends.
#include <QString>
#include <QVector>

class QCPAxis;
class QCustomPlot;
class QCPItemText;
class QFontMetrics;

namespace ampscope::ui {

// Text tick labels, one per row or column (parameters, kernels, sampled steps): when the
// axis is too short to write them all apart, every Nth is written, from the first. The
// axis's length is read when its ticks are made; a plot resized since then is replotted
// once more with the new length.
void setFittingTextTicks(QCPAxis* axis, const QVector<double>& ticks, const QVector<QString>& labels);
// The labels the axis wrote at its last replot (tests).
QVector<QString> writtenTickLabels(const QCPAxis* axis);

// The plot's plain numeric vertical axes ask for only as many ticks as have room for
// their labels (up to QCustomPlot's 5), at every replot; setFittingTextTicks and
// setPlotNote do this for their plot too.
void keepTickLabelsApart(QCustomPlot* plot);

// A note inside a plot's axis rect, wrapped at spaces to the rect's width and elided
// past 40 % of its height (each replot refits it to the current size); its visibility
// is the caller's. plotNoteText returns the text as given.
void setPlotNote(QCPItemText* note, const QString& text);
QString plotNoteText(const QCPItemText* note);

// `text` broken at spaces into lines no wider than `width` pixels (a word wider than
// that keeps its own line); its own line breaks stay.
QString wrapToWidth(const QString& text, const QFontMetrics& metrics, int width);

}  // namespace ampscope::ui
