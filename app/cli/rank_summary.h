#pragma once
#include <string>
#include <vector>

namespace ampscope::cli {

// `ampscope summary A.rank0.ampscope A.rank1.ampscope ...`: the ranks of one distributed
// run side by side: step time (stragglers), skipped steps, the loss scale and whether
// every rank used the same one at every step, and the time in collectives (c10d ops).
int print_rank_summary(const std::vector<std::string>& paths);

}  // namespace ampscope::cli
