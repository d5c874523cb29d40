// The ranks of a distributed run: a row per rank (stragglers, skipped steps, the
// loss scale, collectives), step time and loss scale per rank over the steps.
#include <string>
#include <vector>

#include "profiler/report/html_sections.h"
#include "profiler/report/report_format.h"
#include "profiler/report/svg_chart.h"

namespace ampscope::profiler::report_detail {
namespace {

constexpr int kRankChartWidth = 1100;
constexpr int kRankChartHeight = 260;

std::string rank_table(const RankComparison& ranks) {
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < ranks.ranks.size(); ++i) {
    const RankRow& r = ranks.ranks[i];
    const bool straggler = ranks.is_straggler(i);
    rows.push_back({std::to_string(r.rank), grouped(r.steps), ms_text(r.median_step_ms),
                    (straggler ? "<span class=\"bad\">" : std::string("<span>")) + escape(sig3(r.vs_fastest)) +
                        "×</span>",
                    grouped(r.skipped), escape(sig3(r.last_loss_scale)), ms_text(static_cast<double>(r.collective_cpu_ns) / 1e6),
                    escape(percent(r.collective_share)), "<code>" + escape(r.path) + "</code>"});
  }
  return table_html({{"rank", true},
                     {"steps", true},
                     {"median step", true},
                     {"vs fastest", true, "median step over the fastest rank's median step"},
                     {"skipped", true, "steps GradScaler skipped (inf/NaN gradients)"},
                     {"last loss scale", true},
                     {"collectives", true, "CPU time in top-level torch.distributed (c10d::) ops"},
                     {"share", true, "of all top-level op CPU time"},
                     {"file"}},
                    rows);
}

std::string rank_charts(const RankComparison& ranks) {
  std::vector<svg::Series> times, scales;
  for (size_t i = 0; i < ranks.ranks.size(); ++i) {
    const RankRow& r = ranks.ranks[i];
    const std::string color = svg::palette()[i % svg::palette().size()];
    svg::Series time{"rank " + std::to_string(r.rank), {}, {}, color, false};
    svg::Series scale{"rank " + std::to_string(r.rank), {}, {}, color, i % 2 == 1};
    for (const auto& s : r.step_records) {
      time.x.push_back(static_cast<double>(s.step));
      time.y.push_back(s.step_time_ms);
      scale.x.push_back(static_cast<double>(s.step));
      scale.y.push_back(s.loss_scale);
    }
    times.push_back(std::move(time));
    scales.push_back(std::move(scale));
  }
  svg::LineChartOptions o;
  o.width = kRankChartWidth;
  o.height = kRankChartHeight;
  o.title = "Step time per rank";
  o.x_label = "step";
  o.y_label = "ms";
  std::string s = svg::line_chart(times, o);
  o.title = "Loss scale per rank";
  o.y_label.clear();
  o.log2_y = true;
  s += svg::line_chart(scales, o);
  return s;
}

}  // namespace

std::string ranks_body(const ReportData& d) {
  const RankComparison& ranks = *d.ranks;
  const RankRow& slowest = ranks.ranks[ranks.slowest];
  std::string s = figures_html({{"ranks", std::to_string(ranks.ranks.size())},
                                {"slowest rank", std::to_string(slowest.rank)},
                                {"slowest vs fastest", sig3(slowest.vs_fastest) + "×"},
                                {"loss scale disagreements", grouped(ranks.scale_disagreements)}});
  s += section_html("ranks", "Ranks", rank_table(ranks));
  s += section_html("rank-charts", "Per rank over the steps", rank_charts(ranks));
  return s;
}

}  // namespace ampscope::profiler::report_detail
