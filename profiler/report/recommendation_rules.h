#pragma once
// The recommendation rules, in two groups: those reading the op table and those
// reading steps and gradients. Internal to profiler/report; recommend() runs both.
#include <vector>

#include "profiler/report/recommendations.h"

namespace ampscope::profiler::report_rules {

struct Finding {
  Recommendation recommendation;
  // The share (0..1) of op time, steps or gradient elements concerned: orders
  // findings of one severity.
  double impact = 0;
};

// At most this many evidence lines per recommendation.
inline constexpr size_t kMaxEvidence = 8;

// gemm_dims_not_multiple_of_8, eligible_not_on_tensor_cores, high_cast_tax,
// kept_fp32_share, autocast_off_share, no_autocast_effect, loss_scaler_without_fp16.
void add_op_table_findings(const RecommendationInput& input, std::vector<Finding>& out);

// frequent_skipped_steps, loss_scale_stuck_low, fp16_gradient_underflow,
// scheduler_steps_after_skipped, sharded_gradients_unsynced_scaler, clip_before_unscale.
void add_training_findings(const RecommendationInput& input, std::vector<Finding>& out);

}  // namespace ampscope::profiler::report_rules
