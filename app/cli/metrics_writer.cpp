#include "app/cli/metrics_writer.h"

#include <cmath>


namespace ampscope::cli {

nlohmann::json to_json(const engine::StepEvent& e) {
  // Non-finite numbers (an overflowed loss) become null, which JSON can carry.
  nlohmann::json j = {{"step", e.step},
          {"loss", e.loss},
          {"lr", e.lr},
          {"loss_scale", e.loss_scale},
          {"found_inf", e.found_inf},
          {"skipped", e.skipped},
          {"growth_tracker", e.growth_tracker},
          {"grad_norm", e.grad_norm},
          {"step_time_ms", e.step_time_ms},
          {"samples_per_s", e.samples_per_second},
          {"mem_allocated_bytes", e.memory.allocated_bytes},
          {"mem_reserved_bytes", e.memory.reserved_bytes},
          {"mem_peak_bytes", e.memory.peak_allocated_bytes}};
  // Only on steps that ran a validation (--eval-every).
  if (!std::isnan(e.eval_loss)) j["eval_loss"] = e.eval_loss;
  // GradScaler's decision per optimizer, when the step has several (--recipe multi-loss).
  if (e.optimizers.size() > 1) {
    for (const auto& o : e.optimizers)
      j["optimizers"].push_back({{"name", o.name}, {"found_inf", o.found_inf}, {"skipped", o.skipped},
                                 {"unscale_calls", o.unscale_calls}});
  }
  return j;
}

MetricsWriter::MetricsWriter(const std::string& path) : out_(path) {}

void MetricsWriter::write(const engine::StepEvent& e) { out_.append(to_json(e).dump() + '\n'); }

}  // namespace ampscope::cli
