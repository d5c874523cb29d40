#include "profiler/report/findings.h"

#include <utility>

#include "profiler/report/report_data.h"

namespace ampscope::profiler {
namespace {

// `text` in lines of at most `width` columns (a longer word stands alone), each after `indent`.
std::string wrapped(const std::string& text, size_t indent, size_t width) {
  const std::string pad(indent, ' ');
  const size_t room = width > indent + 20 ? width - indent : 20;
  std::string out, line;
  size_t at = 0;
  while (at < text.size()) {
    const size_t space = text.find(' ', at);
    const std::string word = text.substr(at, space == std::string::npos ? std::string::npos : space - at);
    at = space == std::string::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > room) {
      out += pad + line + '\n';
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += pad + line + '\n';
  return out;
}

}  // namespace

SessionFindings session_findings(const SessionView& session) {
  ReportData report = session_report(session);
  return {std::move(report.verdict), std::move(report.recommendations), {}};
}

SessionFindings comparison_findings(const ReportData& comparison) {
  SessionFindings f{comparison.verdict, {}, {}};
  if (comparison.variant_recommendations.empty())
    f.none_because = "no reduced-precision variant had a profiled pass to read recommendations from";
  for (const VariantRecommendations& v : comparison.variant_recommendations)
    for (Recommendation r : v.recommendations) {
      r.title = v.variant + ": " + r.title;
      f.recommendations.push_back(std::move(r));
    }
  return f;
}

nlohmann::ordered_json findings_json(const SessionFindings& findings) {
  nlohmann::ordered_json j;
  j["verdict"] = findings.verdict;
  j["recommendations"] = nlohmann::ordered_json::array();
  for (const Recommendation& r : findings.recommendations)
    j["recommendations"].push_back({{"id", r.id},
                                    {"severity", std::string(to_string(r.severity))},
                                    {"title", r.title},
                                    {"detail", r.detail},
                                    {"evidence", r.evidence}});
  return j;
}

std::string findings_text(const SessionFindings& findings, size_t width) {
  std::string out = "Verdict\n";
  for (const std::string& sentence : findings.verdict) {
    std::string lines = wrapped(sentence, 4, width);
    if (!lines.empty()) lines[2] = '-';  // "  - " before the first line
    out += lines;
  }
  return out + "\n" + recommendations_text(findings, width);
}

std::string recommendations_text(const SessionFindings& findings, size_t width) {
  if (findings.recommendations.empty())
    return wrapped("What to change: " + (findings.none_because.empty() ? "nothing the recommendation rules look for"
                                                                        : findings.none_because),
                   0, width);
  std::string out = "What to change (" + std::to_string(findings.recommendations.size()) + ")\n";
  for (const Recommendation& r : findings.recommendations) {
    const std::string severity(to_string(r.severity));
    out += "  " + severity + std::string(severity.size() < 9 ? 9 - severity.size() : 1, ' ') + r.title + '\n';
    out += wrapped(r.detail, 11, width);
    for (const std::string& line : r.evidence) {
      std::string lines = wrapped(line, 13, width);
      if (!lines.empty()) lines[11] = '*';
      out += lines;
    }
  }
  return out;
}

}  // namespace ampscope::profiler
