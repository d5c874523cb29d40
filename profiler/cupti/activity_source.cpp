#include "profiler/cupti/activity_source.h"

#include "profiler/cupti/tensor_core_rules.h"

#ifdef AMPSCOPE_HAVE_CUPTI
#include "profiler/cupti/cupti_activity_source.h"
#endif

namespace ampscope::profiler::cupti {

bool built_with_cupti() {
#ifdef AMPSCOPE_HAVE_CUPTI
  return true;
#else
  return false;
#endif
}

std::unique_ptr<ActivitySource> make_activity_source(const std::string& rules_path) {
#ifdef AMPSCOPE_HAVE_CUPTI
  // A bad rule table is an installation error: it throws here, with the line,
  // rather than silently marking every kernel "not Tensor Core".
  auto rules =
      TensorCoreRules::load(rules_path.empty() ? TensorCoreRules::default_path() : rules_path);
  return std::make_unique<CuptiActivitySource>(std::move(rules));
#else
  (void)rules_path;
  return std::make_unique<NullActivitySource>(
      "GPU tracing off: this build has no CUPTI (CUDA toolkit not found at configure); timing ops "
      "on the CPU only");
#endif
}

}  // namespace ampscope::profiler::cupti
