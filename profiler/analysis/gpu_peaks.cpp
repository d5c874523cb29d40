#include "profiler/analysis/gpu_peaks.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "profiler/resource_files.h"

namespace ampscope::profiler {
namespace {

constexpr double kFlopsPerTflops = 1e12;
constexpr size_t kFields = 7;  // patterns | name | fp32 | tf32 | fp16 | bf16 | source

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    const size_t end = s.find(sep, begin);
    parts.push_back(trim(s.substr(begin, end == std::string_view::npos ? end : end - begin)));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// `pattern` occurs in `name` with no letter or digit right before or after it.
bool token_match(const std::string& name, const std::string& pattern) {
  if (pattern.empty()) return false;
  for (size_t pos = name.find(pattern); pos != std::string::npos;
       pos = name.find(pattern, pos + 1)) {
    const size_t end = pos + pattern.size();
    if ((pos == 0 || !is_alnum(name[pos - 1])) && (end == name.size() || !is_alnum(name[end]))) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string gpu_peaks_path() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): nothing in ampscope sets the environment
  if (const char* env = std::getenv("AMPSCOPE_GPU_PEAKS"); env != nullptr && *env) return env;
  return resource_path("gpu_peaks.txt");
}

namespace {

std::vector<GpuPeak> load_table() {
  const std::string path = gpu_peaks_path();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("gpu_peaks.txt: cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_gpu_peaks(text.str());
}

}  // namespace

std::vector<GpuPeak> parse_gpu_peaks(std::string_view text) {
  std::vector<GpuPeak> table;
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;

    auto fail = [&](const std::string& what) {
      throw std::runtime_error("gpu_peaks.txt line " + std::to_string(line_no) + ": " + what);
    };
    const std::vector<std::string_view> fields = split(line, '|');
    if (fields.size() != kFields) {
      fail("expected 7 fields 'patterns | name | fp32 | tf32 | fp16 | bf16 | source', got " +
           std::to_string(fields.size()));
    }
    GpuPeak peak;
    for (std::string_view p : split(fields[0], ',')) {
      if (p.empty()) fail("empty match pattern in '" + std::string(fields[0]) + "'");
      peak.patterns.emplace_back(p);
    }
    peak.name = std::string(fields[1]);
    if (peak.name.empty()) fail("missing display name");
    const char* labels[] = {"fp32", "tf32", "fp16", "bf16"};
    double* figures[] = {&peak.fp32, &peak.tf32, &peak.fp16, &peak.bf16};
    for (size_t i = 0; i < 4; ++i) {
      const std::string_view field = fields[2 + i];
      double tflops = 0;
      const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), tflops);
      if (ec != std::errc() || end != field.data() + field.size() || field.empty() ||
          !(tflops >= 0)) {
        fail(std::string(labels[i]) + " must be a number of TFLOPS >= 0, got '" +
             std::string(field) + "'");
      }
      *figures[i] = tflops * kFlopsPerTflops;
    }
    peak.source = std::string(fields[6]);
    if (peak.source.empty()) fail("missing source for '" + peak.name + "'");
    table.push_back(std::move(peak));
  }
  return table;
}

std::optional<GpuPeak> match_gpu_peak(const std::vector<GpuPeak>& table,
                                      std::string_view device_name) {
  const std::string name = lower(device_name);
  const GpuPeak* best = nullptr;
  size_t best_length = 0;
  for (const GpuPeak& peak : table) {
    for (const std::string& pattern : peak.patterns) {
      if (pattern.size() > best_length && token_match(name, lower(pattern))) {
        best = &peak;
        best_length = pattern.size();
      }
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

std::optional<GpuPeak> find_gpu_peak(std::string_view device_name) {
  // Read on first use; a bad table throws here, and again on the next call.
  static const std::vector<GpuPeak> table = load_table();
  return match_gpu_peak(table, device_name);
}

double peak_for_variant(const GpuPeak& peak, std::string_view variant) {
  if (variant == "fp32") return peak.fp32;
  if (variant == "tf32") return peak.tf32;
  if (variant == "fp16") return peak.fp16;
  if (variant == "bf16") return peak.bf16;
  return 0;
}

}  // namespace ampscope::profiler
