#include "profiler/export/tensorboard/tensorboard_export.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <unordered_map>

#include "profiler/analysis/loss_scale_window.h"
#include "profiler/store/session_reader.h"

namespace ampscope::profiler::tensorboard {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// "2026-11-24T00:17:59Z" -> seconds since the epoch; 0 when unreadable.
double parse_utc(const std::string& iso) {
  std::tm tm{};
  if (strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) return 0;
  return static_cast<double>(timegm(&tm));
}

}  // namespace

std::vector<Scalar> step_scalars(const StepRecord& s, int64_t skipped_steps_so_far, MemoryKind memory) {
  std::vector<Scalar> out{{"train/loss", s.loss},
                          {"train/lr", s.lr},
                          {"train/grad_norm", s.grad_norm},
                          {"amp/loss_scale", s.loss_scale},
                          {"amp/skipped_steps", static_cast<double>(skipped_steps_so_far)},
                          {"perf/step_time_ms", s.step_time_ms},
                          {"perf/samples_per_second", s.samples_per_second}};
  // Only on steps after which validation ran: TensorBoard draws its points joined.
  if (has_eval_loss(s)) out.push_back({"eval/loss", s.eval_loss});
  // Older sessions and readers that measured none hold zeros, which would read as a measurement.
  if (memory == MemoryKind::kResidentSet && (s.mem_allocated_bytes > 0 || s.mem_peak_bytes > 0)) {
    out.push_back({"memory/resident_set_bytes", static_cast<double>(s.mem_allocated_bytes)});
    out.push_back({"memory/peak_resident_set_bytes", static_cast<double>(s.mem_peak_bytes)});
  } else if (memory == MemoryKind::kCudaAllocator &&
             (s.mem_allocated_bytes > 0 || s.mem_reserved_bytes > 0 || s.mem_peak_bytes > 0)) {
    out.push_back({"memory/allocated_bytes", static_cast<double>(s.mem_allocated_bytes)});
    out.push_back({"memory/reserved_bytes", static_cast<double>(s.mem_reserved_bytes)});
    out.push_back({"memory/peak_bytes", static_cast<double>(s.mem_peak_bytes)});
  }
  return out;
}

std::string histogram_tag(const std::string& parameter) { return "grad_log2_abs/" + parameter; }

Histogram log2_magnitude_histogram(const GradientSample& sample) {
  Histogram h;
  int first = kGradBins, last = -1;
  for (int i = 0; i < kGradBins; ++i)
    if (sample.log2_histogram[i] > 0) {
      first = std::min(first, i);
      last = i;
    }
  if (last < 0) return h;
  for (int i = first; i <= last; ++i) {
    const double count = static_cast<double>(sample.log2_histogram[i]);
    const double lower = kGradLog2Min + i, centre = lower + 0.5;
    h.bucket_limit.push_back(lower + 1);
    h.bucket.push_back(count);
    h.num += count;
    h.sum += count * centre;
    h.sum_squares += count * centre * centre;
  }
  // The end bins also hold what lies beyond them, so min/max are clamped to the bins.
  const double lowest = kGradLog2Min + first, highest = kGradLog2Min + last + 1;
  h.min = sample.min_abs_nonzero > 0 ? std::clamp(std::log2(sample.min_abs_nonzero), lowest, highest) : lowest;
  h.max = sample.max_abs > 0 ? std::clamp(std::log2(sample.max_abs), lowest, highest) : highest;
  return h;
}

void write_gradients(EventFileWriter& writer, const std::vector<GradientSample>& samples, double wall_time,
                     const std::string& precision) {
  if (samples.empty()) return;
  std::vector<NamedHistogram> histograms;
  for (const GradientSample& s : samples) {
    Histogram h = log2_magnitude_histogram(s);
    if (h.bucket.empty()) continue;
    histograms.push_back({histogram_tag(s.parameter), std::move(h)});
  }
  std::vector<Scalar> shares;
  for (const FloatFormatLimits& f : kFloatFormats) {
    const FormatRangeShares r = total_range_shares(samples, f.format);
    if (std::isnan(r.underflow)) continue;  // not measured in this session
    const std::string prefix = "grad_range/" + std::string(f.key) + "/";
    shares.push_back({prefix + "underflow", r.underflow});
    shares.push_back({prefix + "subnormal", r.subnormal});
    shares.push_back({prefix + "overflow", r.overflow});
  }
  // The sampled gradients' total L2 norm: a script that does not clip has no train/grad_norm.
  if (const double norm = total_gradient_norm(samples); std::isfinite(norm))
    shares.push_back({"grad_range/norm", norm});
  // Another precision's gradients against fp16 (an fp16 run's backward flushed already).
  if (!precision.empty() && precision != "fp16")
    if (const auto window = loss_scale_window(samples)) {
      shares.push_back({"grad_range/fp16_loss_scale/lowest_log2", static_cast<double>(window->lowest_log2)});
      shares.push_back({"grad_range/fp16_loss_scale/highest_log2", static_cast<double>(window->highest_log2)});
    }
  writer.write(samples.front().step, wall_time, shares, histograms);
}

TensorBoardLogger::TensorBoardLogger(const std::string& dir, std::string precision, MemoryKind memory)
    : writer_(dir), precision_(std::move(precision)), memory_(memory) {}

void TensorBoardLogger::on_step(const StepRecord& step) {
  skipped_ += step.skipped ? 1 : 0;
  writer_.write(step.step, now_seconds(), step_scalars(step, skipped_, memory_));
  writer_.flush();  // a killed run keeps every step logged, as --metrics does
}

void TensorBoardLogger::on_gradients(const std::vector<GradientSample>& samples) {
  if (samples.empty() || samples.front().step <= last_gradient_step_) return;
  last_gradient_step_ = samples.front().step;
  write_gradients(writer_, samples, now_seconds(), precision_);
  writer_.flush();
}

std::string export_session(const SessionReader& session, const std::string& dir) {
  EventFileWriter writer(dir);
  const auto steps = session.steps();
  const double start = parse_utc(session.meta().created_utc);
  const int64_t first_end = steps.empty() ? 0 : steps.front().end_ns;
  const auto wall_time = [&](const StepRecord& s) { return start + static_cast<double>(s.end_ns - first_end) * 1e-9; };
  int64_t skipped = 0;
  const MemoryKind memory = memory_kind(session.meta().device);
  std::unordered_map<int64_t, double> step_wall_time;
  for (const StepRecord& s : steps) {
    skipped += s.skipped ? 1 : 0;
    step_wall_time[s.step] = wall_time(s);
    writer.write(s.step, wall_time(s), step_scalars(s, skipped, memory));
  }
  for (int64_t step : session.gradient_steps()) {
    const auto it = step_wall_time.find(step);
    write_gradients(writer, session.gradients(step), it != step_wall_time.end() ? it->second : start,
                    session.meta().precision);
  }
  writer.flush();
  return writer.path();
}

}  // namespace ampscope::profiler::tensorboard
