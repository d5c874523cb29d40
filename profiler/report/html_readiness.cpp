// The report's precision readiness section (issue #30): a heat map of layers x
// simulated formats, a cell's colour its verdict, its title every tensor's SQNR,
// flushed and saturated share; then the tensors measured and the thresholds.
#include <string>
#include <vector>

#include "profiler/report/html_sections.h"
#include "profiler/report/report_format.h"

namespace ampscope::profiler::report_detail {
namespace {

// "fp8 e4m3 tensorwise: keep in bf16\nweight: SQNR 31.8 dB, 0% flushed, 0% saturated\n..."
std::string cell_title(const LayerReadiness& layer, const QuantFormatSpec& spec) {
  std::string title = layer.layer + ", " + std::string(spec.name) + ": " +
                      std::string(readiness_name(layer.formats[static_cast<int>(spec.format)]));
  for (const TensorQuantization& t : layer.tensors)
    title += "\n" + std::string(tensor_role_name(t.role)) + ": " + describe_metrics(t.formats[static_cast<int>(spec.format)]);
  return title;
}

std::string cell_html(const LayerReadiness& layer, const QuantFormatSpec& spec) {
  const ReadinessReason why = format_reason(layer, spec.format);
  if (!why.metrics) return "<td>\u2013</td>";
  std::string text = std::string(readiness_key(why.verdict)) + " \u00b7 " + describe_metric(why.metric, why.value);
  if (why.verdict != Readiness::ready) text += " (" + std::string(tensor_role_name(why.tensor)) + ")";
  return "<td class=\"" + std::string(readiness_key(why.verdict)) + "\" title=\"" + escape(cell_title(layer, spec)) +
         "\">" + escape(text) + "</td>";
}

std::string best_html(const LayerReadiness& layer) {
  if (layer.overall == Readiness::keep) return "<td class=\"keep\">keep in bf16</td>";
  return "<td class=\"" + std::string(readiness_key(layer.overall)) + "\">" +
         escape(std::string(quant_target_name(layer.best_target)) +
                (layer.overall == Readiness::borderline ? " (borderline)" : "")) +
         "</td>";
}

}  // namespace

std::string readiness_html(const ReportData& d) {
  const ReadinessTotals& totals = d.readiness;
  if (totals.empty()) return {};
  std::string s = paragraph(
      "How each Linear and convolution layer would fare in the low-precision formats of FP8 training recipes, "
      "simulated as torchao quantizes (scales from the tensor's own amax) over " +
      std::to_string(totals.sampled_steps()) + " sampled step" + (totals.sampled_steps() == 1 ? "" : "s") +
      ". A cell is the worst of the layer's tensors; hover it for each tensor's SQNR, flushed and saturated share.");
  s += "<div class=\"scroll\"><table class=\"heat\"><thead><tr><th>layer</th>"
       "<th title=\"the lowest precision the layer is ready for (or borderline, if none is ready)\">lowest ready</th>";
  for (const QuantFormatSpec& spec : kQuantFormats) s += "<th>" + escape(std::string(spec.name)) + "</th>";
  s += "</tr></thead><tbody>";
  for (const LayerReadiness& layer : totals.layers()) {
    s += "<tr><td><code>" + escape(layer.layer) + "</code></td>" + best_html(layer);
    for (const QuantFormatSpec& spec : kQuantFormats) s += cell_html(layer, spec);
    s += "</tr>";
  }
  s += "</tbody></table></div>";
  s += paragraph("Green: ready; amber: borderline; red: keep in bf16. Measured: " +
                     describe_measured_tensors(totals.roles()) + ".",
                 "muted");
  std::string thresholds = "<ul class=\"thresholds\">";
  for (QuantElement e : kQuantElements) thresholds += "<li>" + escape(describe_thresholds(e)) + "</li>";
  s += "<p class=\"muted\">Thresholds, per element format (SQNR = 10 log10 of signal over quantization noise; "
       "flushed: nonzero values that quantize to 0; saturated: values clamped at the format's max):</p>" +
       thresholds + "</ul>";
  return section_html("readiness", "Precision readiness", s);
}

}  // namespace ampscope::profiler::report_detail
