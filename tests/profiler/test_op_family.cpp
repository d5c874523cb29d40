// Issue 31: one classification of ops (profiler/analysis/op_family.h) serves FLOP
// counting, Tensor Core eligibility, the report and comparisons. Checked over the
// op names real hardware and real training runs produce: every op that launched a
// Tensor Core kernel on an H100 (tests/fixtures/h100-kernels.tsv) is GEMM-like, an
// op that only ever ran plain kernels is not, and on the ops of CPU training runs
// (MLP, convnet, GPT; fp32 and bf16) FLOP counting and eligibility agree with the
// family: no family, no FLOPs and no eligibility; a compute op has both.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "engine/trainer.h"
#include "profiler/analysis/flop_count.h"
#include "profiler/analysis/op_family.h"
#include "profiler/analysis/tensor_core_eligibility.h"
#include "profiler/capture/profiler.h"
#include "tests/support/tiny_configs.h"

namespace ampscope::profiler {
namespace {

// The ops in a fixture row's op column: "aten::linear/addmm backward (fp16)" -> aten::linear, aten::addmm.
std::vector<std::string> fixture_ops(const std::string& column) {
  const std::string first = column.substr(0, column.find(' '));
  std::vector<std::string> ops;
  std::stringstream parts(first);
  std::string part;
  while (std::getline(parts, part, '/')) ops.push_back(part.rfind("aten::", 0) == 0 ? part : "aten::" + part);
  return ops;
}

TEST(OpFamily, EveryOpOfAnH100TensorCoreKernelIsGemmLikeAndNoPlainOne) {
  std::ifstream in(AMPSCOPE_FIXTURES_DIR "/h100-kernels.tsv");
  ASSERT_TRUE(in) << "missing fixture";
  std::map<std::string, bool> ran_tensor_cores;  // op -> some kernel of it used them
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream row(line);
    for (std::string f; std::getline(row, f, '\t');) fields.push_back(f);
    ASSERT_GE(fields.size(), 4u) << line;
    for (const std::string& op : fixture_ops(fields[3])) ran_tensor_cores[op] = ran_tensor_cores[op] || fields[1] == "yes";
  }
  ASSERT_GT(ran_tensor_cores.size(), 10u);
  int tensor_core_ops = 0;
  for (const auto& [op, tensor_cores] : ran_tensor_cores) {
    // The fixture lists only the helper kernels of flash attention's backward (dot(dO, O),
    // the dQ conversion), not its main kernel: the one GEMM-like op with plain kernels only.
    const bool listed_partly = op == "aten::_flash_attention_backward";
    EXPECT_EQ(is_gemm_like(op), tensor_cores || listed_partly) << op;
    tensor_core_ops += tensor_cores;
  }
  EXPECT_GE(tensor_core_ops, 8);
}

std::vector<OpStats> op_rows_of(engine::TrainConfig config) {
  ProfilerOptions options;
  options.capture.gradient_every = 0;
  Profiler profiler(options);
  engine::Trainer trainer(config);
  trainer.add_observer(&profiler);
  trainer.start();
  trainer.wait();
  EXPECT_EQ(trainer.state(), engine::RunState::kFinished) << trainer.error_message();
  return profiler.snapshot()->op_stats;
}

TEST(OpFamily, FlopCountingAndEligibilityAgreeWithTheFamilyOnRealRuns) {
  engine::TrainConfig conv = test::tiny_mlp(2);
  conv.model.kind = engine::ModelKind::kConvNet;
  std::vector<engine::TrainConfig> runs{test::tiny_mlp(2), conv, test::tiny_gpt(engine::Precision::kFP32, 2),
                                        test::tiny_gpt(engine::Precision::kBF16, 2)};
  conv.precision = engine::Precision::kBF16;
  runs.push_back(conv);
  std::set<OpFamily> families_seen;
  std::set<std::string> names_seen;
  for (const auto& config : runs) {
    for (const OpStats& row : op_rows_of(config)) {
      names_seen.insert(row.name);
      const OpFamily family = op_family(row.name);
      families_seen.insert(family);
      const Tf32Settings tf32{true, true};  // fp32 GEMMs eligible too: only the family decides here
      const bool eligible = assess(row.name, row.input_dtypes, row.input_shapes, tf32).eligible;
      if (family == OpFamily::kNone) {
        EXPECT_EQ(op_flops(row.name, row.input_shapes), 0.0) << row.name;
        EXPECT_FALSE(eligible) << row.name;
        continue;
      }
      const size_t a = first_operand_index(family);
      const bool floating_operands = a < row.input_dtypes.size() &&
                                     (row.input_dtypes[a] == "float32" || row.input_dtypes[a] == "bfloat16");
      if (floating_operands) {
        EXPECT_TRUE(eligible) << row.name;
      }
      if (is_leaf_compute_op(row.name)) {
        EXPECT_GT(op_flops(row.name, row.input_shapes), 0.0) << row.name;
      }
    }
  }
  // The runs did exercise GEMMs, convolutions (forward and backward) and attention.
  for (OpFamily f : {OpFamily::kLinear, OpFamily::kAddmm, OpFamily::kMm, OpFamily::kConv, OpFamily::kConvBackward,
                     OpFamily::kAttention, OpFamily::kAttentionBackward})
    EXPECT_TRUE(families_seen.count(f)) << static_cast<int>(f);
  // Every attention kernel variant the CPU ran is matched to the op the model called.
  for (const std::string& name : names_seen) {
    if (!is_attention(op_family(name))) continue;
    EXPECT_EQ(matched_op_name(name), "aten::scaled_dot_product_attention") << name;
  }
}

}  // namespace
}  // namespace ampscope::profiler
