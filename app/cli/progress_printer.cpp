#include "app/cli/progress_printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "profiler/number_text.h"

namespace ampscope::cli {
namespace {

std::string format_seconds(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{:.0f}m{:02.0f}s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f}h{:02.0f}m", std::floor(s / 3600), std::fmod(s / 60, 60));
}


}  // namespace

ProgressPrinter::ProgressPrinter(std::FILE* out, int64_t total_steps, int64_t log_every, bool interactive)
    : out_(out),
      total_steps_(total_steps),
      log_every_(log_every > 0 ? log_every : std::max<int64_t>(1, total_steps / 20)),
      interactive_(interactive) {}

void ProgressPrinter::on_event(const engine::Event& event) {
  if (const auto* started = std::get_if<engine::RunStartedEvent>(&event)) {
    fmt::print(out_, "model  {}\ndata   {}\ndevice {}  precision {}{}  params {}\n", started->model,
               started->data, started->device, engine::to_string(started->config.precision),
               started->scaler_enabled ? " + loss scaler" : "", started->parameter_count);
  } else if (const auto* step = std::get_if<engine::StepEvent>(&event)) {
    print_step(*step);
  } else if (const auto* state = std::get_if<engine::StateEvent>(&event)) {
    if (state->state == engine::RunState::kPaused) {
      finish();
      fmt::print(out_, "paused after step {}\n", state->step);
    }
  }
  std::fflush(out_);
}

void ProgressPrinter::print_step(const engine::StepEvent& e) {
  smoothed_step_ms_ = smoothed_step_ms_ == 0.0 ? e.step_time_ms : 0.9 * smoothed_step_ms_ + 0.1 * e.step_time_ms;
  if (e.skipped) ++skipped_;
  const std::string scale = e.loss_scale != 1.0 || e.found_inf ? "  scale " + profiler::text::loss_scale_text(e.loss_scale) : "";
  std::string skip = e.skipped ? "  SKIPPED (inf/NaN grads)" : "";
  if (e.skipped && e.optimizers.size() > 1) {
    // GradScaler decides per optimizer: name the ones that skipped.
    std::string which;
    for (const auto& o : e.optimizers)
      if (o.skipped) which += (which.empty() ? "" : ", ") + o.name;
    skip = fmt::format("  SKIPPED {} (inf/NaN in its gradients)", which);
  }
  if (interactive_) {
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(kWidth * e.step / std::max<int64_t>(total_steps_, 1));
    const double eta = smoothed_step_ms_ * static_cast<double>(total_steps_ - e.step) / 1e3;
    fmt::print(out_, "\r\033[K[{:#<{}}{:.<{}}] {}/{}  loss {:.4f}{}  {:.0f} samples/s  ETA {}{}",
               "", filled, "", kWidth - filled, e.step, total_steps_, e.loss, scale,
               e.samples_per_second, format_seconds(eta), skipped_ > 0 ? fmt::format("  skipped {}", skipped_) : "");
    line_open_ = true;
  } else if (e.step % log_every_ == 0 || e.step == 1 || e.step == total_steps_ || e.skipped) {
    fmt::print(out_, "step {}/{}  loss {:.4f}  lr {:.3g}{}  grad-norm {:.3g}  {:.1f} ms  {:.0f} samples/s  mem {}{}\n",
               e.step, total_steps_, e.loss, e.lr, scale, e.grad_norm, e.step_time_ms, e.samples_per_second,
               profiler::text::bytes_text(e.memory.allocated_bytes), skip);
  }
  if (!std::isnan(e.eval_loss)) {
    if (line_open_) fmt::print(out_, "\n");
    line_open_ = false;
    fmt::print(out_, "eval after step {}: loss {:.4f}\n", e.step, e.eval_loss);
  }
}

void ProgressPrinter::finish() {
  if (line_open_) fmt::print(out_, "\n");
  line_open_ = false;
  std::fflush(out_);
}

}  // namespace ampscope::cli
