// torch.compile under `ampscope run` (python/ampscope/_compiled.py), on the CPU:
// the ops of the compiled graphs carry the dtypes PyTorch itself gives them, compiled
// (AOTAutograd's graphs) and eager (the same script without torch.compile, under the
// same bf16 autocast); they reach the op table as compiled rows that `summary` and the
// JSON summary mark; graph breaks and recompilations are listed with dynamo's reasons.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "profiler/session_meta_keys.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_view.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

namespace meta_key = ampscope::profiler::meta_key;
using ampscope::profiler::compile_time;
using ampscope::profiler::OpCategory;
using ampscope::profiler::OpRecord;
using ampscope::profiler::OpStats;
using ampscope::profiler::Phase;
using ampscope::profiler::SessionReader;
using ampscope::test::ScratchDir;
using DtypeSignatures = std::set<std::pair<std::vector<std::string>, std::vector<std::string>>>;

const std::string kExample = std::string(AMPSCOPE_EXAMPLES_DIR) + "/compiled_bf16.py";

class CompiledCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  }
  // `ampscope run` on the example; the session's path.
  std::filesystem::path run(const std::string& example_args, const std::string& name = "compiled.ampscope") {
    const auto session = dir_ / name;
    const auto r = ampscope::test::ampscope(
        fmt::format("run --out '{}' '{}' {}", session.string(), kExample, example_args));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    // torch.compile's warning about the capture's global module hooks is the capture's to
    // heed (its wrapper opens no module scope), not the user's.
    EXPECT_EQ(r.output.find("when there are global hooks"), std::string::npos) << r.output;
    return session;
  }
  ScratchDir dir_;
};

std::vector<OpStats> compiled_rows(const std::filesystem::path& session) {
  std::vector<OpStats> out;
  for (auto& row : SessionReader::open(session.string()).op_stats())
    if (row.compiled) out.push_back(std::move(row));
  return out;
}

DtypeSignatures signatures(const std::vector<OpStats>& rows, const std::string& op) {
  DtypeSignatures out;
  for (const auto& r : rows)
    if (r.name == op) out.insert({r.input_dtypes, r.output_dtypes});
  return out;
}

DtypeSignatures reference_signatures(const nlohmann::json& reference, const std::string& kind, const std::string& op) {
  DtypeSignatures out;
  for (const auto& entry : reference.at(kind).at(op))
    out.insert({entry[0].get<std::vector<std::string>>(), entry[1].get<std::vector<std::string>>()});
  return out;
}

TEST_F(CompiledCapture, GemmDtypesEqualTheCompiledGraphsAndEagerPyTorchs) {
  const auto session = run("--backend aot_eager --steps 2");
  const auto reference_json = dir_ / "reference.json";
  std::string out;
  ASSERT_EQ(ampscope::test::run_command(
                fmt::format("'{}' '{}' '{}' '{}' --backend aot_eager --steps 2 2>&1",
                            *ampscope::test::python_with_torch(),
                            ampscope::test::test_source_path("python/compiled_reference.py").string(), kExample,
                            reference_json.string()),
                &out),
            0)
      << out;
  std::ifstream in(reference_json);
  const auto reference = nlohmann::json::parse(in);
  const auto rows = compiled_rows(session);
  for (const std::string op : {"aten::addmm", "aten::mm"}) {
    const DtypeSignatures ours = signatures(rows, op);
    EXPECT_FALSE(ours.empty()) << op;
    EXPECT_EQ(ours, reference_signatures(reference, "compiled", op)) << op;
    EXPECT_EQ(ours, reference_signatures(reference, "eager", op)) << op;
  }
  // What autocast decided, read through the casts it traced in: the forward GEMMs
  // demoted (fp32 weights and input, bf16 out), each weight's cast autocast's, and
  // in the backward the gradient cast back to fp32 (the backward of autocast's cast).
  std::set<std::string> demoted_modules;
  bool forward_cast = false, backward_cast = false;
  for (const auto& r : rows) {
    if (r.name == "aten::addmm" && r.phase == Phase::kForward) {
      EXPECT_EQ(r.category, OpCategory::kDemoted) << r.module;
      demoted_modules.insert(r.module);
    }
    if (r.category == OpCategory::kAutocastCast) {
      (r.phase == Phase::kForward ? forward_cast : backward_cast) = true;
      EXPECT_EQ(r.output_dtypes, std::vector<std::string>{r.phase == Phase::kForward ? "bfloat16" : "float32"});
    }
    EXPECT_EQ(r.cpu_time_ns, 0) << "a compiled op has no time of its own";
  }
  EXPECT_EQ(demoted_modules, (std::set<std::string>{"layers.0", "layers.2", "head"}));
  EXPECT_TRUE(forward_cast);
  EXPECT_TRUE(backward_cast);
}

// A compiled model called under torch.no_grad (validation) runs a graph of its own, which
// AOTAutograd traces without autograd: its nodes share one seq_nr, so every cast read as
// a decomposed op's inner step and the GEMMs as "unchanged". Its ops are the training
// forward's, decided alike, in the phase of a forward without autograd; with inductor
// (GELU decomposed, its own casts inside: where it failed) and aot_eager (not decomposed).
TEST_F(CompiledCapture, AValidationGraphUnderNoGradIsDecidedAsTheTrainingForward) {
  for (const std::string backend : {"inductor", "aot_eager"}) {
    SCOPED_TRACE(backend);
    const auto rows = compiled_rows(run("--steps 2 --validate --backend " + backend, backend + ".ampscope"));
    std::map<std::tuple<std::string, std::string, std::vector<std::string>, std::vector<std::string>>, OpCategory>
        training;
    for (const auto& r : rows)
      if (r.phase == Phase::kForward) training[{r.name, r.module, r.input_dtypes, r.output_dtypes}] = r.category;
    std::set<std::string> demoted_modules;
    int64_t no_grad_rows = 0, no_grad_casts = 0;
    for (const auto& r : rows) {
      if (r.phase != Phase::kForwardNoGrad) continue;
      ++no_grad_rows;
      const auto same = training.find({r.name, r.module, r.input_dtypes, r.output_dtypes});
      if (same != training.end()) {
        EXPECT_EQ(r.category, same->second) << r.name << " " << r.module;
      }
      if (r.name == "aten::addmm" && r.category == OpCategory::kDemoted) demoted_modules.insert(r.module);
      no_grad_casts += r.category == OpCategory::kAutocastCast;
    }
    EXPECT_GT(no_grad_rows, 0) << "the validation graph's ops are in the no-grad phase";
    EXPECT_EQ(demoted_modules, (std::set<std::string>{"layers.0", "layers.2", "head"}));
    EXPECT_GT(no_grad_casts, 0) << "autocast's casts of the weights";
  }
}

// A compiled *function* holding the forward and loss (the model inlined in its graph: no
// module hook fires) and a compiled optimizer step (PyTorch's recipe) in a loop without a
// GradScaler: steps used to end only where the next began at a model call or autocast
// region, so the whole run was one step, its losses summed; the regions' time was "other".
TEST_F(CompiledCapture, ACompiledLossFunctionAndOptimizerStepBeginTheirStepsInTheirPhases) {
  const auto session = dir_ / "function.ampscope";
  const auto r = ampscope::test::ampscope(fmt::format(
      "run --out '{}' '{}' --compile function --compile-optimizer --backend aot_eager --steps 5", session.string(),
      kExample));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto reader = SessionReader::open(session.string());
  const auto steps = reader.steps();
  ASSERT_EQ(steps.size(), 5u) << "one step per optimizer step";
  for (const auto& step : steps) EXPECT_LT(step.loss, 3.0) << "step " << step.step << ": one batch's loss, not a sum";
  const auto printed = r.output.find("final loss ");
  ASSERT_NE(printed, std::string::npos) << r.output;
  EXPECT_NEAR(steps.back().loss, std::stod(r.output.substr(printed + 11)), 1e-4);
  const auto optimizer_steps = reader.optimizer_steps();
  ASSERT_EQ(optimizer_steps.size(), 5u);
  for (size_t i = 0; i < optimizer_steps.size(); ++i) EXPECT_EQ(optimizer_steps[i].step, steps[i].step);
  // The model, never called under a hook, is mapped from the script's globals.
  EXPECT_NE(reader.meta_value("model").value_or("").find("MLP (6,922 parameters)"), std::string::npos)
      << reader.meta_value("model").value_or("");
  // After its first call (the compile), each function's region is in the phase its graphs
  // ran in; the optimizer's graph, compiled inside optimizer.step(), is the optimizer's.
  std::map<Phase, int64_t> region_calls;
  int64_t optimizer_graph_rows = 0;
  for (const auto& row : reader.op_stats()) {
    if (row.top_level && row.name.starts_with("Torch-Compiled Region")) region_calls[row.phase] += row.calls;
    // SGD's update: aten::add on the CPU, the foreach kernels' _foreach_add on CUDA.
    if (row.compiled && (row.name == "aten::add" || row.name.starts_with("aten::_foreach_add"))) {
      EXPECT_EQ(row.phase, Phase::kOptimizer) << row.name << " " << row.module;
    }
    optimizer_graph_rows += row.compiled && row.phase == Phase::kOptimizer;
  }
  EXPECT_EQ(region_calls[Phase::kForward], 4);
  EXPECT_EQ(region_calls[Phase::kOptimizer], 4);
  // Each function's first call (phase other: known once it has run) is step 1's, which the
  // table leaves out as warm-up, its compiles apart; the recorded calls keep it.
  EXPECT_EQ(region_calls[Phase::kOther], 0);
  EXPECT_EQ(reader.meta_value(meta_key::kProfiledSteps).value_or(""), "4");
  int64_t first_calls = 0;
  for (const OpRecord& op : reader.ops(1, 1))
    first_calls += op.parent_id == 0 && op.name.starts_with("Torch-Compiled Region") && op.phase == Phase::kOther;
  EXPECT_EQ(first_calls, 2) << "each function's first call";
  EXPECT_GT(compile_time(reader.op_stats()).calls, 0) << "step 1's compiles stay in the table";
  EXPECT_GT(optimizer_graph_rows, 0);
}

// Activation checkpointing compiled: AOTAutograd's partitioner puts the recomputed forward
// in the backward graph, where its Linears' addmm read "unchanged" and their weights' casts
// as backward casts. Those nodes are forward code, decided as in the forward, in the phase
// recompute, as the eager run of the same script has its recomputed Linears.
TEST_F(CompiledCapture, ACheckpointedBlocksRecomputationIsDecidedAsItsForward) {
  const auto session = run("--steps 2 --checkpoint --backend aot_eager");
  const auto rows = compiled_rows(session);
  std::map<std::tuple<std::string, std::string, std::vector<std::string>, std::vector<std::string>>, OpCategory>
      forward;
  for (const auto& r : rows)
    if (r.phase == Phase::kForward) forward[{r.name, r.module, r.input_dtypes, r.output_dtypes}] = r.category;
  std::set<std::string> recomputed_demoted, backward_addmm;
  int64_t recompute_rows = 0, recompute_calls = 0;
  for (const auto& r : rows) {
    if (r.name == "aten::addmm" && r.phase == Phase::kBackward) backward_addmm.insert(r.module);
    if (r.phase != Phase::kRecompute) continue;
    ++recompute_rows;
    recompute_calls += r.top_level ? r.calls : 0;
    const auto same = forward.find({r.name, r.module, r.input_dtypes, r.output_dtypes});
    ASSERT_NE(same, forward.end()) << r.name << " " << r.module << ": recomputed, so run in the forward";
    EXPECT_EQ(r.category, same->second) << r.name << " " << r.module;
    if (r.name == "aten::addmm" && r.category == OpCategory::kDemoted) recomputed_demoted.insert(r.module);
  }
  EXPECT_GT(recompute_rows, 0);
  EXPECT_EQ(recomputed_demoted, (std::set<std::string>{"layers.0", "layers.2"}));  // the head is not checkpointed
  EXPECT_TRUE(backward_addmm.empty()) << *backward_addmm.begin() << ": a backward computes no addmm";
  // Its time is the backward graph's: not a recompute phase that cost nothing.
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session.string()));
  EXPECT_NE(summary.output.find(fmt::format("  recompute        {:>8} calls   (compiled graphs' nodes: timed in their "
                                            "graph's call)\n",
                                            recompute_calls)),
            std::string::npos)
      << summary.output;
  const auto json_path = dir_ / "summary.json";
  ASSERT_EQ(
      ampscope::test::ampscope(fmt::format("export -f json -o '{}' '{}'", json_path.string(), session.string())).exit_code,
      0);
  std::ifstream json_in(json_path);
  const auto phases = nlohmann::json::parse(json_in).at("totals").at("phases");
  bool recompute = false;
  for (const auto& p : phases)
    if (p.at("phase") == "recompute") {
      recompute = true;
      EXPECT_EQ(p.at("compiled_calls"), p.at("calls")) << p.dump();
    }
  EXPECT_TRUE(recompute) << phases.dump();

  std::set<std::pair<std::string, Phase>> eager_linears;
  for (const auto& r : SessionReader::open(run("--steps 2 --checkpoint --eager", "eager.ampscope").string()).op_stats())
    if (r.top_level && r.name == "aten::linear" && r.category == OpCategory::kDemoted)
      eager_linears.insert({r.module, r.phase});
  EXPECT_EQ(eager_linears, (std::set<std::pair<std::string, Phase>>{{"layers.0", Phase::kForward},
                                                                      {"layers.2", Phase::kForward},
                                                                      {"head", Phase::kForward},
                                                                      {"layers.0", Phase::kRecompute},
                                                                      {"layers.2", Phase::kRecompute}}));
}

// Models nobody here wrote, built from configs (no downloads): a small GPT-2 from
// transformers (Conv1D's addmm, attention's bmm) and torchvision's ResNet-18
// (convolutions, the fc's addmm). Every GEMM and convolution dtype signature ampscope
// read from the compiled graphs equals PyTorch's own, compiled and eager.
class CompiledModels : public CompiledCapture, public ::testing::WithParamInterface<const char*> {};

TEST_P(CompiledModels, GemmAndConvolutionDtypesEqualPyTorchs) {
  const std::string args = fmt::format("--backend aot_eager --steps 2 --model {}", GetParam());
  const auto session = run(args);
  const auto reference_json = dir_ / "reference.json";
  std::string out;
  ASSERT_EQ(ampscope::test::run_command(
                fmt::format("'{}' '{}' '{}' '{}' {} 2>&1", *ampscope::test::python_with_torch(),
                            ampscope::test::test_source_path("python/compiled_reference.py").string(), kExample,
                            reference_json.string(), args),
                &out),
            0)
      << out;
  std::ifstream in(reference_json);
  const auto reference = nlohmann::json::parse(in);
  const auto rows = compiled_rows(session);
  ASSERT_FALSE(reference.at("compiled").empty());
  for (const auto& [op, entries] : reference.at("compiled").items()) {
    const DtypeSignatures ours = signatures(rows, op);
    EXPECT_EQ(ours, reference_signatures(reference, "compiled", op)) << GetParam() << " " << op;
    if (reference.at("eager").contains(op)) {
      EXPECT_EQ(ours, reference_signatures(reference, "eager", op)) << GetParam() << " " << op;
    }
  }
  // autocast demoted the forward GEMMs (convolutions) of named modules: bf16 out.
  size_t demoted = 0;
  for (const auto& r : rows)
    if (r.phase == Phase::kForward && r.category == OpCategory::kDemoted && !r.module.empty()) {
      ++demoted;
      EXPECT_EQ(r.output_dtypes.front(), "bfloat16") << r.name << " " << r.module;
    }
  EXPECT_GT(demoted, 0u) << GetParam();
  // Throughput from the batch of 4 (--batch 16: a quarter for these models), given by
  // keyword to the transformers (input_ids=...), where no hook runs inside the compiled model;
  // after the first step, whose call compiles it.
  const auto steps = SessionReader::open(session.string()).steps();
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_NEAR(steps[1].samples_per_second, 4 * 1000.0 / steps[1].step_time_ms, 1e-6 * steps[1].samples_per_second)
      << GetParam();
  // A batch norm takes the bf16 convolution's output with its fp32 parameters: autocast
  // cast none of its inputs, so it decided nothing (as eager reads it: the diff below agrees).
  size_t batch_norms = 0;
  for (const auto& r : rows) {
    if (r.phase != Phase::kForward || r.name.find("batch_norm") == std::string::npos) continue;
    ++batch_norms;
    EXPECT_EQ(r.category, OpCategory::kUnchanged) << r.name << " " << r.module;
  }
  EXPECT_EQ(batch_norms > 0, std::string(GetParam()) == "resnet") << GetParam();
  // Llama's rotary embedding multiplies its angles with autocast turned off (its code's
  // autocast(enabled=False), traced into dynamo's graph): autocast_off there, as in eager.
  int64_t turned_off = 0;
  for (const auto& r : rows) {
    if (r.category != OpCategory::kAutocastOff) continue;
    EXPECT_EQ(r.module, "model.rotary_emb") << r.name;
    EXPECT_EQ(r.output_dtypes, std::vector<std::string>{"float32"}) << r.name;
    turned_off += r.calls;
  }
  EXPECT_EQ(turned_off > 0, std::string(GetParam()) == "llama") << GetParam();
}

// `ampscope diff` on the same models eager and compiled: every module's GEMMs and
// convolutions found in both runs, in the same dtypes, demoted by autocast in both.
TEST_P(CompiledModels, DiffFindsEveryGemmAndConvolutionAlikeEagerAndCompiled) {
  const std::string args = fmt::format("--backend aot_eager --steps 2 --model {}", GetParam());
  const auto eager = run(args + " --eager", "eager.ampscope");
  const auto compiled = run(args);
  const auto r = ampscope::test::ampscope(fmt::format("diff '{}' '{}' --json", eager.string(), compiled.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto d = nlohmann::json::parse(r.output);
  const auto& agreement = d.at("agreement");
  EXPECT_GT(agreement.at("same"), 0);
  EXPECT_EQ(agreement.at("differs"), 0) << GetParam() << " " << r.output;
  EXPECT_EQ(agreement.at("eager_only"), 0) << GetParam() << " " << r.output;
  // Some ops of a compiled backward graph carry no module path (AOTAutograd gave
  // their nodes no nn_module_stack): listed as compiled only, under no module. Every
  // op with a module path is matched.
  for (const auto& m : d.at("modules")) {
    if (m.at("agreement") == "compiled only") {
      EXPECT_EQ(m.at("module"), "") << m.dump();
    }
  }
  size_t demoted_in_both = 0;
  for (const auto& m : d.at("modules"))
    demoted_in_both += m.at("phase") == "forward" && m.at("eager").at("autocast") == "demoted" &&
                       m.at("compiled").at("autocast") == "demoted";
  // GPT-2: 2 blocks x 4 + lm_head; Llama: 2 layers x 7 + lm_head; ResNet-18: 20 convs + fc.
  const std::map<std::string, size_t> gemm_modules{{"gpt2", 9}, {"llama", 15}, {"resnet", 21}};
  EXPECT_GE(demoted_in_both, gemm_modules.at(GetParam())) << r.output;
}

INSTANTIATE_TEST_SUITE_P(FromConfigs, CompiledModels, ::testing::Values("gpt2", "llama", "resnet"));

// Llama's attention under inductor (grouped-query, through SDPA): autocast cast the query,
// key and value to bf16 for SDPA, each a cast of its own, though SDPA's mask (a where that
// makes no autograd node) shares the query cast's seq_nr; the copies that repeat the key and
// value heads (clones) come after the cast cat's promotion made and decide nothing.
TEST_F(CompiledCapture, LlamasAttentionInputCastsAreAutocastsAndItsHeadCopiesDecideNothing) {
  const auto rows = compiled_rows(run("--steps 2 --model llama"));
  int64_t attention_casts = 0, clones = 0, attention = 0, rotary_off = 0;
  for (const auto& r : rows) {
    // The rotary angles' batched matmul, under the model's autocast(enabled=False).
    if (r.module == "model.rotary_emb" && r.category == OpCategory::kAutocastOff) rotary_off += r.calls;
    if (r.phase != Phase::kForward || !r.module.ends_with("self_attn")) continue;
    if (r.name == "prims::convert_element_type" && r.output_dtypes == std::vector<std::string>{"bfloat16"}) {
      EXPECT_EQ(r.category, OpCategory::kAutocastCast) << r.module << " " << r.calls << " calls";
      attention_casts += r.calls;
    } else if (r.name == "aten::clone") {
      EXPECT_EQ(r.category, OpCategory::kUnchanged) << r.module;
      clones += r.calls;
    } else if (r.name.find("scaled_dot_product") != std::string::npos) {
      EXPECT_EQ(r.category, OpCategory::kDemoted) << r.name;
      attention += r.calls;
    }
  }
  EXPECT_EQ(attention, 2 * 1) << "2 layers, the table's 1 step (step 1 left out as warm-up)";
  EXPECT_EQ(attention_casts, 3 * 2 * 1) << "query, key and value";
  EXPECT_GT(clones, 0);
  EXPECT_GT(rotary_off, 0);
}

TEST_F(CompiledCapture, InductorRunShowsDemotedGemmRowsInSummaryAndJson) {
  const int steps = 3;
  const auto session = run(fmt::format("--steps {}", steps));  // the example's default backend: inductor
  std::map<std::string, const OpStats*> forward_gemms;
  const auto rows = compiled_rows(session);
  for (const auto& r : rows)
    if (r.name == "aten::addmm" && r.phase == Phase::kForward) forward_gemms[r.module] = &r;
  ASSERT_EQ(forward_gemms.size(), 3u);
  for (const auto& [module, r] : forward_gemms) {
    EXPECT_EQ(r->category, OpCategory::kDemoted) << module;
    EXPECT_EQ(r->output_dtypes, std::vector<std::string>{"bfloat16"}) << module;
    EXPECT_EQ(r->calls, steps - 1) << module << ": one call per step of the compiled forward but the warm-up";
  }
  bool backward_mm = false;
  for (const auto& r : rows)
    backward_mm |= r.name == "aten::mm" && r.phase == Phase::kBackward && r.calls == steps - 1;
  EXPECT_TRUE(backward_mm) << "the compiled backward's GEMMs, counted per backward call";
  // Inductor decomposes GELU into a cast of its bf16 input to fp32, the arithmetic and a
  // cast back: the precision it computes in, as eager's gelu kernel does inside. Autocast
  // decided nothing there (GELU is on none of its lists), so no row of the GELU modules
  // (layers.1, layers.3) is a decision or an autocast cast, forward or backward.
  int gelu_rows = 0, gelu_casts = 0;
  for (const auto& r : rows) {
    if (r.module != "layers.1" && r.module != "layers.3") continue;
    ++gelu_rows;
    gelu_casts += r.name == "prims::convert_element_type";
    EXPECT_EQ(r.category, OpCategory::kUnchanged) << r.name << " " << r.module << " " << to_string(r.phase);
  }
  EXPECT_GT(gelu_rows, 0);
  EXPECT_GT(gelu_casts, 0);

  const auto view = ampscope::profiler::load_session_view(session.string());
  EXPECT_EQ(view.compile.graphs, 1);
  EXPECT_TRUE(view.compile.graph_breaks.empty()) << view.compile.graph_breaks.front().reason
                                                  << ": ampscope's own hooks must not break the graph";
  EXPECT_TRUE(view.compile.recompilations.empty());

  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session.string()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("Compiled (torch.compile): 1 AOTAutograd graph read (forward and backward); ops"),
            std::string::npos)
      << summary.output;
  EXPECT_NE(summary.output.find("compiled demoted"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("graph breaks: none"), std::string::npos) << summary.output;

  const auto json = ampscope::test::ampscope(fmt::format("export '{}' --format json", session.string()));
  ASSERT_EQ(json.exit_code, 0) << json.output;
  std::ifstream in(dir_ / "compiled.summary.json");
  const auto s = nlohmann::json::parse(in);
  bool demoted_head = false;
  for (const auto& op : s.at("compiled").at("ops")) {
    EXPECT_TRUE(op.at("compiled").get<bool>());
    demoted_head |= op.at("name") == "aten::addmm" && op.at("module") == "head" && op.at("category") == "demoted";
  }
  EXPECT_TRUE(demoted_head) << s.at("compiled").dump();
  for (const auto& op : s.at("top_ops")) EXPECT_TRUE(op.contains("compiled"));
}

TEST_F(CompiledCapture, GraphBreaksAndRecompilationsAreListedWithDynamosReasons) {
  const auto session = run("--backend aot_eager --steps 3 --graph-break --vary-batch");
  const auto view = ampscope::profiler::load_session_view(session.string());
  ASSERT_FALSE(view.compile.graph_breaks.empty());
  bool item_break = false;
  for (const auto& b : view.compile.graph_breaks)
    item_break |= b.where.find("compiled_bf16.py:") != std::string::npos && b.reason.find("item()") != std::string::npos;
  EXPECT_TRUE(item_break) << view.compile.graph_breaks.front().where << ": " << view.compile.graph_breaks.front().reason;
  bool batch_recompile = false;
  for (const auto& r : view.compile.recompilations) batch_recompile |= r.reason.find("size mismatch") != std::string::npos;
  EXPECT_TRUE(batch_recompile) << (view.compile.recompilations.empty() ? "none" : view.compile.recompilations.front().reason);
  EXPECT_GT(view.compile.graphs, 2) << "a graph on each side of the break, and more for the new batch size";

  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session.string()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("Unsupported Tensor.item()"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("size mismatch"), std::string::npos) << summary.output;

  // Each compile is one op of its own, its time in no autocast category: the first
  // call's, the resumed frame's after the break (inside the region that reached it) and
  // the new batch size's (on the last step, which is profiled too).
  const auto rows = SessionReader::open(session.string()).op_stats();
  const ampscope::profiler::CompileTime compiling = ampscope::profiler::compile_time(rows);
  EXPECT_GE(compiling.calls, 3) << "before, after the break, and the recompilation";
  int64_t top_level = 0, nested_compile = 0;
  for (const auto& r : rows) {
    if (r.name == ampscope::profiler::kTorchCompileOp) {
      if (!r.top_level) nested_compile += r.cpu_time_ns;
    } else if (r.top_level) {
      top_level += r.cpu_time_ns;
    }
  }
  int64_t categories = 0;
  for (const auto& t : view.category_totals) categories += t.cpu_time_ns;
  EXPECT_EQ(categories, top_level - nested_compile);
  EXPECT_LT(categories, compiling.cpu_time_ns) << "compiling is most of a 3-step run's time";
  EXPECT_NE(summary.output.find("torch.compile compiled "), std::string::npos) << summary.output;
}

// Dynamo's compile callbacks also open around CUDA graph trees' recording of a graph
// (CallbackTrigger.CUDAGRAPH_RECORDING): the compiled code running in the step, whose
// ops are recorded; around a compile (DYNAMO) they are not (an H200 session missed
// every op of its CUDA-graph recording calls).
TEST_F(CompiledCapture, OpsRunWhileACudaGraphIsRecordedAreRecordedAndACompilesAreNot) {
  const auto script = dir_ / "callbacks.py";
  ampscope::test::write_file(script, R"(import torch
from torch._dynamo.callback import CallbackTrigger
torch.compile(torch.nn.Identity())  # ampscope hooks dynamo at the first torch.compile (nothing compiles)
import torch._dynamo
model = torch.nn.Linear(8, 8)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
a = torch.randn(4, 4)
for step in range(3):
    model(torch.randn(2, 8)).sum().backward()
    with torch._dynamo.callback_handler.install_callbacks(CallbackTrigger.CUDAGRAPH_RECORDING, "0/0"):
        torch.kron(a, a)
    with torch._dynamo.callback_handler.install_callbacks(CallbackTrigger.DYNAMO, "0/0"):
        torch.cumprod(a, 0)
    optimizer.step()
    optimizer.zero_grad()
)");
  const auto session = dir_ / "callbacks.ampscope";
  const auto r = ampscope::test::ampscope(fmt::format("run --out '{}' '{}'", session.string(), script.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::set<std::string> names;
  for (const auto& row : SessionReader::open(session.string()).op_stats()) names.insert(row.name);
  EXPECT_TRUE(names.contains("aten::kron")) << "run while a CUDA graph is recorded";
  EXPECT_FALSE(names.contains("aten::cumprod")) << "run by a compile";
  EXPECT_TRUE(names.contains("aten::addmm")) << "recording is on again after both";
}

TEST_F(CompiledCapture, DiffSetsTheEagerRunBesideTheCompiledOne) {
  // The same script, steps and seed, without and with torch.compile (inductor's C++
  // backend): every Linear's GEMMs ran in bf16 in both, and autocast demoted each.
  const auto eager = run("--eager --steps 3", "eager.ampscope");
  const auto compiled = run("--steps 3");
  const auto r = ampscope::test::ampscope(fmt::format("diff '{}' '{}' --json", eager.string(), compiled.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto d = nlohmann::json::parse(r.output);
  EXPECT_TRUE(d.at("compiled_run_has_graphs").get<bool>());
  EXPECT_EQ(d.at("agreement").at("differs"), 0) << r.output;
  EXPECT_FALSE(d.at("speedup").is_null());
  std::set<std::string> forward_same;
  for (const auto& m : d.at("modules")) {
    if (m.at("phase") != "forward" || m.at("agreement") != "same") continue;
    EXPECT_EQ(m.at("eager").at("autocast"), "demoted") << m.dump();
    EXPECT_EQ(m.at("compiled").at("autocast"), "demoted") << m.dump();
    EXPECT_EQ(m.at("compiled").at("output_dtypes"), nlohmann::json::array({"bfloat16"})) << m.dump();
    forward_same.insert(m.at("module").get<std::string>());
  }
  EXPECT_EQ(forward_same, (std::set<std::string>{"layers.0", "layers.2", "head"})) << r.output;
  bool forward_timed = false;
  for (const auto& p : d.at("phases"))
    forward_timed |= p.at("phase") == "forward" && p.at("eager_cpu_ms").get<double>() > 0 &&
                     p.at("compiled_cpu_ms").get<double>() > 0;
  EXPECT_TRUE(forward_timed) << d.at("phases").dump();

  const auto page = dir_ / "diff.html";
  const auto text = ampscope::test::ampscope(
      fmt::format("diff '{}' '{}' --html '{}'", eager.string(), compiled.string(), page.string()));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("Torch-Compiled Region"), std::string::npos) << text.output;
  std::ifstream html_in(page);
  const std::string html((std::istreambuf_iterator<char>(html_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("layers.0"), std::string::npos);
  EXPECT_NE(html.find("Torch-Compiled Region"), std::string::npos);
  // A missing session: one line, exit 1.
  const auto missing = ampscope::test::ampscope(fmt::format("diff '{}' '{}'", (dir_ / "none.ampscope").string(),
                                                            compiled.string()));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(std::count(missing.output.begin(), missing.output.end(), '\n'), 1) << missing.output;
}

}  // namespace
