#pragma once
// Small SVG chart writers for the HTML report. Each returns one self-contained
// `<svg>` element as a string: no scripts, no external references, every text
// escaped, every coordinate finite. Axes, grid and labels use `currentColor`, so
// the page's colour scheme (light or dark) styles them; series use a fixed palette
// readable on both. The markup is well-formed XML as well as valid inline HTML.
#include <cstdint>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ampscope::profiler::svg {

// Colours of series in order, readable on light and dark backgrounds.
const std::vector<std::string>& palette();
// "#rrggbb" of a 0xRRGGBB colour (profiler/display_colors.h).
std::string css_color(uint32_t rgb);
inline constexpr const char* kMarkerColor = "#d62728";  // skipped steps and other alarms

struct Series {
  std::string name;
  std::vector<double> x;  // ascending; same length as y
  std::vector<double> y;  // NaN or ±inf breaks the line (and so does <= 0 on a log axis)
  std::string color;      // "" = palette()[index]
  bool dashed = false;
  bool dots = false;      // also a dot at each point (sparse series: validation steps)
};

struct LineChartOptions {
  std::string title;  // the accessible name (<title>), also drawn above the plot
  std::string x_label;
  std::string y_label;
  int width = 720;  // px of the whole chart
  int height = 240;
  bool log2_y = false;  // y ticks at powers of two
  // Drawn as short red ticks at the bottom of the plot, with marker_label in the legend
  // (e.g. the steps the loss scaler skipped). Several in one pixel column draw once.
  std::vector<double> marker_x;
  std::string marker_label;
  // The top of a linear y axis: values above it are drawn on the top edge (the step-time
  // chart leaves a compiling first step off its scale: step_time_scale), and `note` says so.
  std::optional<double> y_max;
  std::string note;  // drawn at the plot's top right
};

// A series longer than about twice the plot's pixel width is reduced to the min and
// max of each pixel column (in their original order), so a million-step series stays a
// few kilobytes and its spikes stay visible.
std::string line_chart(const std::vector<Series>& series, const LineChartOptions& options);

struct Bar {
  std::string label;
  double value = 0.0;  // >= 0; non-finite values draw no bar and print "–"
  std::string color;   // "" = palette()[0]
};

struct BarChartOptions {
  std::string title;
  std::string unit;  // appended to each value: "ms"
  int width = 720;
  int bar_height = 18;
  int label_width = 200;  // px reserved for the labels at the left
};

// Horizontal bars, one row each, in the order given.
std::string bar_chart(const std::vector<Bar>& bars, const BarChartOptions& options);

struct ShadedRange {
  double from = 0.0, to = 0.0;  // in x units; clipped to the plotted range
  std::string label;            // drawn at the top of the range and in the legend
  std::string color;
};

struct HistogramOptions {
  std::string title;
  std::string x_label;
  std::string y_label;
  int width = 720;
  int height = 240;
  bool log_count = false;  // y = log10(1 + count): rare bins stay visible beside huge ones
  bool x_is_log2 = false;  // x tick labels as 2^k
  std::vector<ShadedRange> shaded;
};

// Bars for bins [x_min + i*bin_width, x_min + (i+1)*bin_width), over shaded x ranges.
std::string histogram(double x_min, double bin_width, const std::vector<double>& counts,
                      const HistogramOptions& options);

// "Nice" tick values (1, 2 or 5 times a power of ten) covering [lo, hi], about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 6);

namespace detail {
struct Point {
  double x = 0.0, y = 0.0;
  bool break_before = false;  // start a new subpath here
};
// The min/max-per-column reduction line_chart applies; x and y in pixel units already
// mapped; non-finite y become breaks. `columns` is the plot width in pixels.
std::vector<Point> downsample(const std::vector<Point>& points, double x0, double x1, int columns);
}  // namespace detail

}  // namespace ampscope::profiler::svg
