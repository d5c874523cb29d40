#pragma once
// Which modules' outputs the activation ranges cannot see. A range sample measures a
// module's output as its forward hook gets it; code torch.compile compiled runs no module
// hooks (dynamo traces them into its graph, where the capture does nothing: recording
// there would put ops of its own into the user's compiled code on every step). So the
// modules called inside a compiled graph have no output measured, and "no module output
// overflowed fp16" covers only those called outside graphs: the model itself, blocks
// compiled one by one. Those inside are named by the graphs' forward ops (op_stats rows
// marked `compiled`). One implementation for `summary`, the JSON summary, the report
// and the GUI.
#include <cstddef>
#include <string>
#include <vector>

#include "profiler/analysis/profile_snapshot.h"

namespace ampscope::profiler {

// The modules whose forward ops ran in compiled graphs and that no activation sample of
// the latest sampled step measured, in the op table's order; empty where the profile has
// no activation sample (nothing was measured, so nothing is missing from a measurement).
std::vector<std::string> modules_unmeasured_in_compiled_graphs(const ProfileSnapshot& profile);

// "the outputs of 7 modules inside torch.compile'd graphs are not measured (compiled code
// runs no module hooks): blocks.0.norm, blocks.0.up, … and 2 more"; "" for none.
std::string unmeasured_activations_text(const std::vector<std::string>& modules, size_t shown = 6);

}  // namespace ampscope::profiler
