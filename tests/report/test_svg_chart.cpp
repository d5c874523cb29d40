// The SVG chart writer: well-formed, escaped, self-contained markup; NaN breaks a
// line without leaking "nan" into coordinates; a million-point series stays small.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>
#include <string>

#include "profiler/report/svg_chart.h"
#include "tests/report/report_fixture.h"

namespace ampscope::test {
namespace {

namespace svg = ampscope::profiler::svg;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + what.size())) ++n;
  return n;
}

// Every number inside geometry attributes must be finite: no "nan", "inf" or "e+".
void expect_finite_geometry(const std::string& svg) {
  const std::regex geometry(R"re(\b(?:x|y|x1|x2|y1|y2|width|height|d|transform)="([^"]*)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), geometry);
       it != std::sregex_iterator(); ++it) {
    std::string value = (*it)[1];
    for (auto& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(value.find("nan"), std::string::npos) << (*it)[0];
    EXPECT_EQ(value.find("inf"), std::string::npos) << (*it)[0];
  }
}

svg::Series ramp(size_t n) {
  svg::Series s{"ramp", {}, {}, "", false};
  for (size_t i = 0; i < n; ++i) {
    s.x.push_back(static_cast<double>(i + 1));
    s.y.push_back(static_cast<double>(i) * 0.5);
  }
  return s;
}

TEST(SvgChart, NiceTicksAreRoundAndCoverTheRange) {
  const auto t = svg::nice_ticks(0, 97, 5);
  ASSERT_GE(t.size(), 4u);
  EXPECT_DOUBLE_EQ(t.front(), 0);
  EXPECT_DOUBLE_EQ(t[1] - t[0], 20);
  EXPECT_LE(t.back(), 97);
  const auto small = svg::nice_ticks(0.0012, 0.0049, 4);
  ASSERT_GE(small.size(), 3u);
  EXPECT_NEAR(small[1] - small[0], 0.001, 1e-12);
  EXPECT_EQ(svg::nice_ticks(kNaN, 1).size(), 0u);
}

TEST(SvgChart, LineChartIsWellFormedEscapedAndSelfContained) {
  svg::LineChartOptions o;
  o.title = R"(loss <fp16> & "scale")";
  o.x_label = "step";
  auto s = ramp(50);
  s.name = "a<b>";
  const auto out = svg::line_chart({s}, o);
  EXPECT_EQ(out.rfind("<svg", 0), 0u);
  EXPECT_NE(out.find("</svg>"), std::string::npos);
  EXPECT_NE(out.find("loss &lt;fp16&gt; &amp; &quot;scale&quot;"), std::string::npos);
  EXPECT_NE(out.find("a&lt;b&gt;"), std::string::npos);
  EXPECT_EQ(out.find("<fp16>"), std::string::npos);
  EXPECT_EQ(out.find("<script"), std::string::npos);
  EXPECT_EQ(out.find("http"), std::string::npos);  // not even an xmlns: inline SVG needs none
  EXPECT_EQ(tag_balance_problems(out), "");
  expect_finite_geometry(out);
}

TEST(SvgChart, NaNAndInfinityBreakTheLineWithoutGarbage) {
  svg::Series s = ramp(20);
  s.y[5] = kNaN;
  s.y[12] = kInf;
  svg::LineChartOptions o;
  o.title = "loss";
  const auto out = svg::line_chart({s}, o);
  expect_finite_geometry(out);
  const std::smatch m = [&] {
    std::smatch r;
    std::regex_search(out, r, std::regex(R"re(<path d="([^"]*)" fill="none")re"));
    return r;
  }();
  ASSERT_FALSE(m.empty());
  EXPECT_EQ(count(m[1], "M"), 3u) << "three pieces: 0-4, 6-11, 13-19";

  // All NaN: an empty plot that says so, still valid.
  svg::Series nan_only{"loss", {1, 2, 3}, {kNaN, kNaN, kNaN}, "", false};
  const auto empty = svg::line_chart({nan_only}, o);
  expect_finite_geometry(empty);
  EXPECT_NE(empty.find("no data"), std::string::npos);
  EXPECT_EQ(tag_balance_problems(empty), "");

  // Log axis: zero and negatives cannot be drawn and break the line instead.
  svg::Series scale{"scale", {1, 2, 3, 4}, {65536, 0, -1, 32768}, "", false};
  o.log2_y = true;
  expect_finite_geometry(svg::line_chart({scale}, o));
}

// A step-time chart with a compiling first step: the axis stops at y_max, the step is
// drawn on the top edge, and the note says what was left off.
TEST(SvgChart, ACeilingCapsTheAxisAndDrawsLargerValuesOnTheTopEdge) {
  svg::Series s{"step time", {1, 2, 3, 4}, {15'000, 3, 2.5, 3.5}, "", false};
  svg::LineChartOptions o;
  o.title = "Step time";
  const auto uncapped = svg::line_chart({s}, o);
  EXPECT_NE(uncapped.find(">15k<"), std::string::npos) << "the tick at the compiling step's time";
  o.y_max = 4.0;
  o.note = "off the scale: step 1 (15.00 s)";
  const auto capped = svg::line_chart({s}, o);
  expect_finite_geometry(capped);
  EXPECT_EQ(capped.find("k<"), std::string::npos) << "no tick in thousands";
  EXPECT_NE(capped.find(">4.0<"), std::string::npos) << "ticks of the other steps' range";
  EXPECT_NE(capped.find("off the scale: step 1 (15.00 s)"), std::string::npos);
  EXPECT_EQ(tag_balance_problems(capped), "");
  // The first point sits on the plot's top edge (the frame's top, 44 px: the axis's
  // top with its 5 % headroom), not above it.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(capped, m, std::regex(R"re(<path d="M[0-9.]+ ([0-9.]+))re")));
  EXPECT_NEAR(std::stod(m[1]), 44.0, 1.0);
}

TEST(SvgChart, AMillionPointSeriesIsDownsampledAndKeepsItsSpike) {
  svg::Series s{"loss", {}, {}, "", false};
  const size_t n = 1'000'000;
  s.x.resize(n);
  s.y.resize(n);
  for (size_t i = 0; i < n; ++i) {
    s.x[i] = static_cast<double>(i + 1);
    s.y[i] = 2.0 + std::sin(static_cast<double>(i) * 1e-4);
  }
  s.y[777'777] = 50.0;  // one spike must survive the reduction
  svg::LineChartOptions o;
  o.width = 720;
  const auto out = svg::line_chart({s}, o);
  EXPECT_LT(out.size(), 40'000u) << "a million points must not become megabytes";
  expect_finite_geometry(out);
  // The spike is the only point near the top of the plot (y at the top margin, 44 px + 5%
  // headroom).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"re(<path d="([^"]*)" fill="none")re")));
  const std::string d = m[1];
  double min_y = 1e9;
  const std::regex point(R"re([ML]([-0-9.]+) ([-0-9.]+))re");
  for (auto it = std::sregex_iterator(d.begin(), d.end(), point); it != std::sregex_iterator();
       ++it)
    min_y = std::min(min_y, std::stod((*it)[2]));
  EXPECT_LT(min_y, 60.0);
}

TEST(SvgChart, DownsampleKeepsTheMinAndMaxOfEachColumnInOrder) {
  std::vector<svg::detail::Point> pts;
  for (int i = 0; i < 1000; ++i) pts.push_back({i * 0.01, i % 2 == 0 ? 1.0 : -1.0 * i, false});
  pts[500].y = kNaN;
  const auto out = svg::detail::downsample(pts, 0.0, 10.0, 10);
  EXPECT_LE(out.size(), 20u);
  EXPECT_GE(out.size(), 10u);
  for (size_t i = 1; i < out.size(); ++i) EXPECT_LE(out[i - 1].x, out[i].x);
  bool has_break = false;
  for (const auto& p : out) has_break = has_break || p.break_before;
  EXPECT_TRUE(has_break);
  // Short series pass through, with NaN turned into a break.
  std::vector<svg::detail::Point> few = {{0, 1, false}, {1, kNaN, false}, {2, 3, false}};
  const auto kept = svg::detail::downsample(few, 0, 2, 100);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_TRUE(kept[1].break_before);
}

TEST(SvgChart, SkippedStepsAreRedTicksInTheLegend) {
  svg::LineChartOptions o;
  o.marker_x = {5, 7, 7.01, 1e9, kNaN};  // out-of-range and NaN markers are left out
  o.marker_label = "skipped step";
  const auto out = svg::line_chart({ramp(20)}, o);
  EXPECT_NE(out.find(svg::kMarkerColor), std::string::npos);
  EXPECT_NE(out.find("skipped step (3): 5, 7, 7"), std::string::npos);
  EXPECT_EQ(count(out, "v-10"), 2u) << "7 and 7.01 share a pixel column";
  expect_finite_geometry(out);
}

TEST(SvgChart, Log2AxisLabelsArePowersOfTwo) {
  svg::Series s{"scale", {1, 2, 3}, {1024, 65536, 32768}, "", false};
  svg::LineChartOptions o;
  o.log2_y = true;
  const auto out = svg::line_chart({s}, o);
  EXPECT_NE(out.find("2<tspan dy=\"-4\" font-size=\"8\">16</tspan>"), std::string::npos);
  EXPECT_EQ(tag_balance_problems(out), "");
}

TEST(SvgChart, BarChartLabelsValuesAndUnits) {
  svg::BarChartOptions o;
  o.title = "median step";
  o.unit = "ms";
  const auto out =
      svg::bar_chart({{"fp32", 10.0, ""}, {"bf16 <fast>", 4.2, ""}, {"broken", kNaN, ""}}, o);
  EXPECT_NE(out.find(">10.0 ms<"), std::string::npos);
  EXPECT_NE(out.find(">4.20 ms<"), std::string::npos);
  EXPECT_NE(out.find("bf16 &lt;fast&gt;"), std::string::npos);
  EXPECT_EQ(tag_balance_problems(out), "");
  expect_finite_geometry(out);
}

TEST(SvgChart, HistogramShadesTheGivenRanges) {
  std::vector<double> counts(40, 0.0);
  counts[10] = 5;
  counts[20] = 1e12;
  svg::HistogramOptions o;
  o.title = "|g|";
  o.log_count = true;
  o.x_is_log2 = true;
  o.shaded = {{-1e9, -24, "flushes to 0 in fp16", "#d62728"},
              {-24, -14, "fp16 subnormal", "#ff7f0e"},
              {100, 200, "beyond the plot", "#9467bd"}};
  const auto out = svg::histogram(-40, 1, counts, o);
  EXPECT_NE(out.find("flushes to 0 in fp16"), std::string::npos);
  EXPECT_NE(out.find("fill-opacity=\"0.16\""), std::string::npos);
  EXPECT_EQ(count(out, "fill-opacity=\"0.16\""), 2u) << "a range outside the plot draws nothing";
  EXPECT_EQ(tag_balance_problems(out), "");
  expect_finite_geometry(out);
}

}  // namespace
}  // namespace ampscope::test
