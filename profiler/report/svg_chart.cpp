#include "profiler/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "profiler/report/report_format.h"

namespace ampscope::profiler::svg {
namespace {

using report_detail::escape;
using report_detail::printf_string;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kLeft = 62, kRight = 16, kTop = 44, kBottom = 40;  // px around the plot area
constexpr double kCharWidth = 6.6;                               // px per character at font-size 11

// Coordinates are rounded to 0.1 px: finer is invisible and only grows the file.
std::string num(double v) {
  if (!std::isfinite(v)) v = 0;  // never reached by design; keeps the markup valid if it were
  std::string s = printf_string("%.1f", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return !(lo <= hi); }
  // A zero-width range gets some width so values map to the middle, not to a division by zero.
  void widen() {
    if (empty()) {
      lo = 0;
      hi = 1;
    } else if (hi - lo <= std::fabs(hi) * 1e-12) {
      const double pad = lo == 0 ? 1.0 : std::fabs(lo) * 0.05;
      lo -= pad;
      hi += pad;
    }
  }
};

// Tick label text for a linear axis with the given tick spacing.
std::string tick_text(double v, double step, double max_abs) {
  double scale = 1;
  const char* suffix = "";
  if (max_abs >= 1e6) {
    scale = 1e6;
    suffix = "M";
  } else if (max_abs >= 1e4) {
    scale = 1e3;
    suffix = "k";
  }
  const double s = step / scale;
  const int decimals = s >= 1 ? 0 : std::min(6, static_cast<int>(std::ceil(-std::log10(s) - 1e-9)));
  std::string text = printf_string("%.*f", decimals, v / scale);
  if (text == "-0") text = "0";
  return text + suffix;
}

// A power of two as 2 with a superscript exponent, or the plain number near 1.
std::string pow2_label(double exponent) {
  const double r = std::round(exponent);
  if (std::fabs(exponent - r) > 1e-9) return escape(report_detail::sig3(std::exp2(exponent)));
  if (std::fabs(r) <= 3) return printf_string("%g", std::exp2(r));
  return printf_string("2<tspan dy=\"-4\" font-size=\"8\">%.0f</tspan>", r);
}

std::string open_svg(int width, int height, const std::string& title) {
  std::string s = printf_string(
      "<svg class=\"chart\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
      "font-size=\"11\" fill=\"currentColor\">",
      width, height, width, height);
  s += "<title>" + escape(title) + "</title>";
  if (!title.empty())
    s += "<text x=\"4\" y=\"14\" font-weight=\"600\" font-size=\"12\">" + escape(title) + "</text>";
  return s;
}

struct LegendItem {
  std::string label, color;
  enum Kind { kLine, kDashed, kTick, kBox } kind = kLine;
};

// One row of legend items at y, left to right from x.
std::string legend(const std::vector<LegendItem>& items, double x, double y, double max_x) {
  std::string s;
  for (const auto& item : items) {
    const double w = 22 + kCharWidth * static_cast<double>(item.label.size()) + 14;
    if (x + w > max_x && x > kLeft) break;  // no room: the chart's title says the rest
    switch (item.kind) {
      case LegendItem::kLine:
      case LegendItem::kDashed:
        s += "<line x1=\"" + num(x) + "\" y1=\"" + num(y - 4) + "\" x2=\"" + num(x + 16) +
             "\" y2=\"" + num(y - 4) + "\" stroke=\"" + item.color + "\" stroke-width=\"2\"" +
             (item.kind == LegendItem::kDashed ? " stroke-dasharray=\"4 2\"" : "") + "/>";
        break;
      case LegendItem::kTick:
        s += "<line x1=\"" + num(x + 8) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x + 8) +
             "\" y2=\"" + num(y - 9) + "\" stroke=\"" + item.color + "\" stroke-width=\"2\"/>";
        break;
      case LegendItem::kBox:
        s += "<rect x=\"" + num(x) + "\" y=\"" + num(y - 9) +
             "\" width=\"16\" height=\"10\" fill=\"" + item.color +
             "\" fill-opacity=\"0.25\" stroke=\"" + item.color + "\"/>";
        break;
    }
    s += "<text x=\"" + num(x + 22) + "\" y=\"" + num(y) + "\">" + escape(item.label) + "</text>";
    x += w;
  }
  return s;
}

struct Frame {
  double left, top, width, height;
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};

std::string y_grid(const Frame& f, const std::vector<std::pair<double, std::string>>& ticks) {
  std::string s;
  for (const auto& [py, label] : ticks) {
    s += "<line x1=\"" + num(f.left) + "\" y1=\"" + num(py) + "\" x2=\"" + num(f.right()) +
         "\" y2=\"" + num(py) + "\" stroke=\"currentColor\" stroke-opacity=\"0.15\"/>";
    s += "<text x=\"" + num(f.left - 6) + "\" y=\"" + num(py + 4) + "\" text-anchor=\"end\">" +
         label + "</text>";
  }
  return s;
}

std::string x_axis(const Frame& f, const std::vector<std::pair<double, std::string>>& ticks) {
  std::string s = "<line x1=\"" + num(f.left) + "\" y1=\"" + num(f.bottom()) + "\" x2=\"" +
                  num(f.right()) + "\" y2=\"" + num(f.bottom()) +
                  "\" stroke=\"currentColor\" stroke-opacity=\"0.6\"/>";
  s += "<line x1=\"" + num(f.left) + "\" y1=\"" + num(f.top) + "\" x2=\"" + num(f.left) +
       "\" y2=\"" + num(f.bottom()) + "\" stroke=\"currentColor\" stroke-opacity=\"0.6\"/>";
  for (const auto& [px, label] : ticks) {
    s += "<line x1=\"" + num(px) + "\" y1=\"" + num(f.bottom()) + "\" x2=\"" + num(px) +
         "\" y2=\"" + num(f.bottom() + 4) + "\" stroke=\"currentColor\" stroke-opacity=\"0.6\"/>";
    s += "<text x=\"" + num(px) + "\" y=\"" + num(f.bottom() + 16) + "\" text-anchor=\"middle\">" +
         label + "</text>";
  }
  return s;
}

std::string axis_labels(const Frame& f, int height, const std::string& x_label,
                        const std::string& y_label) {
  std::string s;
  if (!x_label.empty())
    s += "<text x=\"" + num(f.left + f.width / 2) + "\" y=\"" + num(height - 4) +
         "\" text-anchor=\"middle\">" + escape(x_label) + "</text>";
  if (!y_label.empty())
    s += "<text x=\"12\" y=\"" + num(f.top + f.height / 2) +
         "\" text-anchor=\"middle\" transform=\"rotate(-90 12 " + num(f.top + f.height / 2) +
         ")\">" + escape(y_label) + "</text>";
  return s;
}

std::vector<double> log2_ticks(double lo, double hi) {
  std::vector<double> ticks;
  const double first = std::ceil(lo - 1e-9), last = std::floor(hi + 1e-9);
  if (last < first) return nice_ticks(lo, hi, 4);  // less than one octave: ticks between powers
  const double count = last - first + 1;
  const double stride = std::max(1.0, std::ceil(count / 6));
  for (double e = first; e <= last + 1e-9; e += stride) ticks.push_back(e);
  return ticks;
}

}  // namespace

const std::vector<std::string>& palette() {
  static const std::vector<std::string> colors = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
                                                  "#8c564b", "#e377c2", "#17becf", "#7f7f7f"};
  return colors;
}

std::string css_color(uint32_t rgb) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "#";
  for (int shift = 20; shift >= 0; shift -= 4) s += kHex[(rgb >> shift) & 0xf];
  return s;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!std::isfinite(lo) || !std::isfinite(hi) || target < 1) return ticks;
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) return {lo};
  const double raw = (hi - lo) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / magnitude;
  const double step = (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * magnitude;
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

namespace detail {

std::vector<Point> downsample(const std::vector<Point>& points, double x0, double x1, int columns) {
  std::vector<Point> out;
  const bool reduce = columns > 0 && points.size() > 2 * static_cast<size_t>(columns) && x1 > x0;
  if (!reduce) {
    bool pending_break = false;
    for (const auto& p : points) {
      if (!std::isfinite(p.y) || !std::isfinite(p.x)) {
        pending_break = true;
        continue;
      }
      out.push_back({p.x, p.y, pending_break || p.break_before});
      pending_break = false;
    }
    return out;
  }
  out.reserve(4 * static_cast<size_t>(columns));
  long column = -1;
  long min_i = -1, max_i = -1;
  bool break_at_start = false, break_after = false, carry = false;
  auto flush = [&] {
    if (min_i >= 0) {
      const long a = std::min(min_i, max_i), b = std::max(min_i, max_i);
      out.push_back({points[a].x, points[a].y, break_at_start || carry});
      if (b != a) out.push_back({points[b].x, points[b].y, false});
      carry = break_after;
    } else {
      carry = carry || break_at_start || break_after;
    }
    min_i = max_i = -1;
    break_at_start = break_after = false;
  };
  for (size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    if (!std::isfinite(p.x)) continue;
    const long c = std::clamp(static_cast<long>((p.x - x0) / (x1 - x0) * columns), 0L,
                              static_cast<long>(columns) - 1);
    if (c != column) {
      flush();
      column = c;
    }
    if (!std::isfinite(p.y) || p.break_before) {
      (min_i < 0 ? break_at_start : break_after) = true;
      if (!std::isfinite(p.y)) continue;
    }
    const long li = static_cast<long>(i);
    if (min_i < 0 || p.y < points[min_i].y) min_i = li;
    if (max_i < 0 || p.y > points[max_i].y) max_i = li;
  }
  flush();
  return out;
}

}  // namespace detail

std::string line_chart(const std::vector<Series>& series, const LineChartOptions& o) {
  const Frame f{kLeft, kTop, std::max(40.0, static_cast<double>(o.width - kLeft - kRight)),
                std::max(40.0, static_cast<double>(o.height - kTop - kBottom))};
  auto y_value = [&](double y) { return o.log2_y ? (y > 0 ? std::log2(y) : kNaN) : y; };
  Range xr, yr;
  bool integer_x = true;  // step numbers: ticks at whole steps only
  for (const auto& s : series) {
    const size_t n = std::min(s.x.size(), s.y.size());
    for (size_t i = 0; i < n; ++i) {
      const double y = y_value(s.y[i]);
      if (!std::isfinite(y) || !std::isfinite(s.x[i])) continue;
      xr.add(s.x[i]);
      yr.add(y);
      integer_x = integer_x && s.x[i] == std::floor(s.x[i]);
    }
  }
  const bool no_data = yr.empty();
  if (o.y_max && !o.log2_y && !no_data && *o.y_max > yr.lo && *o.y_max < yr.hi) yr.hi = *o.y_max;
  xr.widen();
  yr.widen();
  if (!o.log2_y) {  // a little headroom so the extremes do not sit on the frame
    const double pad = (yr.hi - yr.lo) * 0.05;
    yr.lo -= pad;
    yr.hi += pad;
  } else {
    yr.lo -= 0.25;
    yr.hi += 0.25;
  }
  auto px = [&](double x) { return f.left + (x - xr.lo) / (xr.hi - xr.lo) * f.width; };
  auto py = [&](double y) { return f.top + (1 - (y - yr.lo) / (yr.hi - yr.lo)) * f.height; };

  std::string s = open_svg(o.width, o.height, o.title);
  std::vector<LegendItem> items;
  for (size_t i = 0; i < series.size(); ++i) {
    const auto& color = series[i].color.empty() ? palette()[i % palette().size()] : series[i].color;
    items.push_back(
        {series[i].name, color, series[i].dashed ? LegendItem::kDashed : LegendItem::kLine});
  }
  if (!o.marker_x.empty() && !o.marker_label.empty())
    items.push_back({o.marker_label, kMarkerColor, LegendItem::kTick});
  s += legend(items, f.left, 30, o.width - kRight);

  std::vector<std::pair<double, std::string>> yt, xt;
  const double y_step_guess = (yr.hi - yr.lo) / 5;
  const auto yticks = o.log2_y ? log2_ticks(yr.lo, yr.hi) : nice_ticks(yr.lo, yr.hi, 5);
  const double y_step = yticks.size() > 1 ? yticks[1] - yticks[0] : y_step_guess;
  const double y_abs = std::max(std::fabs(yr.lo), std::fabs(yr.hi));
  for (double t : yticks)
    yt.emplace_back(py(t), o.log2_y ? pow2_label(t) : escape(tick_text(t, y_step, y_abs)));
  auto xticks = nice_ticks(xr.lo, xr.hi, std::max(2, static_cast<int>(f.width / 90)));
  if (integer_x && xticks.size() > 1 && xticks[1] - xticks[0] < 1) {  // steps: no "2.5"
    xticks.clear();
    for (double t = std::ceil(xr.lo); t <= xr.hi; ++t) xticks.push_back(t);
  }
  const double x_step = xticks.size() > 1 ? xticks[1] - xticks[0] : 1;
  const double x_abs = std::max(std::fabs(xr.lo), std::fabs(xr.hi));
  for (double t : xticks) xt.emplace_back(px(t), escape(tick_text(t, x_step, x_abs)));
  s += y_grid(f, yt);
  s += x_axis(f, xt);
  s += axis_labels(f, o.height, o.x_label, o.y_label);
  if (no_data)
    s += "<text x=\"" + num(f.left + f.width / 2) + "\" y=\"" + num(f.top + f.height / 2) +
         "\" text-anchor=\"middle\" fill-opacity=\"0.6\">no data</text>";
  if (!o.note.empty())
    s += "<text x=\"" + num(f.right() - 4) + "\" y=\"" + num(f.top + 14) +
         "\" text-anchor=\"end\" fill-opacity=\"0.7\">" + escape(o.note) + "</text>";

  const int columns = static_cast<int>(f.width);
  for (size_t i = 0; i < series.size(); ++i) {
    const auto& ser = series[i];
    const size_t n = std::min(ser.x.size(), ser.y.size());
    std::vector<detail::Point> pts;
    pts.reserve(n);
    for (size_t k = 0; k < n; ++k) {
      const double y = y_value(ser.y[k]);
      pts.push_back({px(ser.x[k]), std::isfinite(y) ? py(std::min(y, yr.hi)) : kNaN, false});
    }
    const auto reduced = detail::downsample(pts, f.left, f.right(), columns);
    if (reduced.empty()) continue;
    std::string d;
    d.reserve(reduced.size() * 14);
    for (size_t k = 0; k < reduced.size(); ++k) {
      const bool start = k == 0 || reduced[k].break_before;
      const bool lone = start && (k + 1 == reduced.size() || reduced[k + 1].break_before);
      d += (start ? "M" : "L") + num(reduced[k].x) + " " + num(reduced[k].y);
      if (lone) d += "h0.01";  // a point between two breaks: the round cap draws it as a dot
    }
    const auto& color = ser.color.empty() ? palette()[i % palette().size()] : ser.color;
    s += "<path d=\"";
    s += d;
    s += "\" fill=\"none\" stroke=\"";
    s += color;
    s += "\" stroke-width=\"1.5\" stroke-linejoin=\"round\" stroke-linecap=\"round\"";
    if (ser.dashed) s += " stroke-dasharray=\"5 3\"";
    s += "><title>" + escape(ser.name) + "</title></path>";
    if (ser.dots && reduced.size() <= 500)
      for (const auto& p : reduced)
        if (std::isfinite(p.y))
          s += "<circle cx=\"" + num(p.x) + "\" cy=\"" + num(p.y) + "\" r=\"2.5\" fill=\"" + color + "\"/>";
  }

  if (!o.marker_x.empty()) {
    std::set<long> drawn;  // pixel columns already ticked
    std::string d;
    std::string listed;
    size_t count = 0;
    for (double x : o.marker_x) {
      if (!std::isfinite(x) || x < xr.lo || x > xr.hi) continue;
      ++count;
      if (count <= 12) listed += (listed.empty() ? "" : ", ") + tick_text(x, 1, 0);
      const long column = std::lround(px(x));
      if (!drawn.insert(column).second) continue;
      d += "M" + num(static_cast<double>(column)) + " " + num(f.bottom()) + "v-10";
    }
    if (!d.empty()) {
      if (count > 12) listed += ", \u2026";
      s += "<path d=\"" + d + "\" stroke=\"" + kMarkerColor +
           "\" stroke-width=\"2\" fill=\"none\"><title>" +
           escape(o.marker_label + " (" + std::to_string(count) + "): " + listed) +
           "</title></path>";
    }
  }
  s += "</svg>";
  return s;
}

std::string bar_chart(const std::vector<Bar>& bars, const BarChartOptions& o) {
  const int row = o.bar_height + 6;
  const int top = o.title.empty() ? 6 : 24;
  const int height = top + row * static_cast<int>(bars.size()) + 6;
  double max_value = 0;
  for (const auto& b : bars)
    if (std::isfinite(b.value)) max_value = std::max(max_value, b.value);
  const double bar_space = std::max(20.0, static_cast<double>(o.width - o.label_width - 110));
  std::string s = open_svg(o.width, height, o.title);
  for (size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    const double y = top + static_cast<double>(row * static_cast<int>(i));
    const double w = std::isfinite(b.value) && b.value > 0 && max_value > 0
                         ? b.value / max_value * bar_space
                         : 0;
    std::string label = b.label;
    const size_t max_chars = static_cast<size_t>(std::max(4.0, (o.label_width - 10) / kCharWidth));
    if (label.size() > max_chars) label = label.substr(0, max_chars - 1) + "\u2026";
    s += "<text x=\"" + num(o.label_width - 8) + "\" y=\"" + num(y + o.bar_height * 0.5 + 4) +
         "\" text-anchor=\"end\">" + escape(label) + "<title>" + escape(b.label) +
         "</title></text>";
    s += "<rect x=\"" + num(o.label_width) + "\" y=\"" + num(y) + "\" width=\"" + num(w) +
         "\" height=\"" + num(o.bar_height) + "\" fill=\"" +
         (b.color.empty() ? palette()[0] : b.color) + "\"/>";
    const std::string value = report_detail::sig3(b.value) + (o.unit.empty() ? "" : " " + o.unit);
    s += "<text x=\"" + num(o.label_width + w + 6) + "\" y=\"" + num(y + o.bar_height * 0.5 + 4) +
         "\">" + escape(value) + "</text>";
  }
  s += "</svg>";
  return s;
}

std::string histogram(double x_min, double bin_width, const std::vector<double>& counts,
                      const HistogramOptions& o) {
  const Frame f{kLeft, kTop, std::max(40.0, static_cast<double>(o.width - kLeft - kRight)),
                std::max(40.0, static_cast<double>(o.height - kTop - kBottom))};
  if (!(bin_width > 0) || !std::isfinite(bin_width)) bin_width = 1;
  if (!std::isfinite(x_min)) x_min = 0;
  const double x_max = x_min + bin_width * static_cast<double>(std::max<size_t>(1, counts.size()));
  auto height_of = [&](double c) {
    if (!std::isfinite(c) || c <= 0) return 0.0;
    return o.log_count ? std::log10(1 + c) : c;
  };
  double top_value = 0;
  for (double c : counts) top_value = std::max(top_value, height_of(c));
  const double y_hi = top_value > 0 ? top_value * 1.08 : 1;
  auto px = [&](double x) { return f.left + (x - x_min) / (x_max - x_min) * f.width; };
  auto py = [&](double v) { return f.top + (1 - v / y_hi) * f.height; };

  std::string s = open_svg(o.width, o.height, o.title);
  std::vector<LegendItem> items;
  for (const auto& r : o.shaded) items.push_back({r.label, r.color, LegendItem::kBox});
  s += legend(items, f.left + 8, 30, o.width - kRight);
  for (const auto& r : o.shaded) {
    const double a = std::clamp(std::min(r.from, r.to), x_min, x_max);
    const double b = std::clamp(std::max(r.from, r.to), x_min, x_max);
    if (!(b > a)) continue;
    s += "<rect x=\"" + num(px(a)) + "\" y=\"" + num(f.top) + "\" width=\"" + num(px(b) - px(a)) +
         "\" height=\"" + num(f.height) + "\" fill=\"" + r.color +
         "\" fill-opacity=\"0.16\"><title>" + escape(r.label) + "</title></rect>";
  }

  std::vector<std::pair<double, std::string>> yt, xt;
  if (o.log_count) {
    const int stride = std::max(1, static_cast<int>(std::ceil(y_hi / 5)));
    for (int e = 0; e <= static_cast<int>(y_hi); e += stride) {
      const double v = std::log10(1 + std::pow(10.0, e));
      if (v <= y_hi)
        yt.emplace_back(
            py(v),
            e == 0 ? "1" : printf_string("10<tspan dy=\"-4\" font-size=\"8\">%d</tspan>", e));
    }
  } else {
    const auto ticks = nice_ticks(0, y_hi, 4);
    const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
    for (double t : ticks) yt.emplace_back(py(t), escape(tick_text(t, step, y_hi)));
  }
  const auto xticks = nice_ticks(x_min, x_max, std::max(2, static_cast<int>(f.width / 70)));
  const double x_step = xticks.size() > 1 ? xticks[1] - xticks[0] : 1;
  for (double t : xticks)
    xt.emplace_back(px(t),
                    o.x_is_log2 ? pow2_label(t) : escape(tick_text(t, x_step, std::fabs(x_max))));
  s += y_grid(f, yt);

  std::string bars;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double h = height_of(counts[i]);
    if (h <= 0) continue;
    const double x0 = px(x_min + bin_width * static_cast<double>(i));
    const double x1 = px(x_min + bin_width * static_cast<double>(i + 1));
    bars += "<rect x=\"" + num(x0 + 0.5) + "\" y=\"" + num(py(h)) + "\" width=\"" +
            num(std::max(0.5, x1 - x0 - 1)) + "\" height=\"" + num(f.bottom() - py(h)) + "\"/>";
  }
  s += "<g fill=\"" + palette()[0] + "\">" + bars + "</g>";
  s += x_axis(f, xt);
  s += axis_labels(f, o.height, o.x_label, o.y_label);
  s += "</svg>";
  return s;
}

}  // namespace ampscope::profiler::svg
