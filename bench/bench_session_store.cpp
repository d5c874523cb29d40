// The session file's op rows: what the writer's thread spends per op stored, how
// many bytes an op takes in the file, and what reading them back costs. Under full
// capture a launch-bound step records ~8,000 ops, and the writer is the process's
// busiest thread (docs/performance.md): when it falls behind, the run's end waits
// for it and waiting records hold memory.
//
// The op stream is built like a profiled MLP step's (the issue #27 model: 64 Linear
// layers, bf16 autocast): per layer a demoted aten::linear with the casts autocast
// inserted under it and its addmm, a relu, and in backward the autograd nodes with
// the ops they ran. Ids, times and steps advance as a run's do. Figures go into
// docs/performance.md, never into pass/fail tests.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "profiler/records.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_writer.h"

namespace {

using namespace ampscope::profiler;

constexpr int kLayers = 64;
constexpr int64_t kWidth = 32, kBatch = 16;

struct StepBuilder {
  std::vector<OpRecord> ops;
  uint64_t next_id = 1;
  int64_t now_ns = 0;
  int64_t step = 1;

  OpRecord& add(std::string name, Phase phase, OpCategory category, std::string module,
                uint64_t parent, uint32_t depth, std::vector<DtypeName> in,
                std::vector<Shape> shapes, std::vector<DtypeName> out) {
    OpRecord op;
    op.id = next_id++;
    op.parent_id = parent;
    op.step = step;
    op.name = std::move(name);
    op.phase = phase;
    op.category = category;
    op.module = std::move(module);
    op.depth = depth;
    op.thread_id = 1;
    op.start_ns = now_ns;
    now_ns += 900;
    op.end_ns = now_ns;
    op.input_dtypes = std::move(in);
    op.input_shapes = std::move(shapes);
    op.output_dtypes = std::move(out);
    ops.push_back(std::move(op));
    return ops.back();
  }

  // One training step's ops, ~100 per layer as the profiled MLP records.
  std::vector<OpRecord> next_step() {
    ops.clear();
    const Shape act{kBatch, kWidth}, weight{kWidth, kWidth}, bias{kWidth};
    for (int l = 0; l < kLayers; ++l) {
      const std::string module = "layers." + std::to_string(l);
      const uint64_t linear =
          add("aten::linear", Phase::kForward, OpCategory::kDemoted, module, 0, 0,
              {"float", "float", "float"}, {act, weight, bias}, {"c10::BFloat16"})
              .id;
      for (const Shape& s : {weight, bias}) {
        const uint64_t cast = add("aten::to", Phase::kForward, OpCategory::kAutocastCast, module,
                                  linear, 1, {"float"}, {s}, {"c10::BFloat16"})
                                  .id;
        ops.back().cast_bytes = 2 * s[0] * (s.size() > 1 ? s[1] : 1);
        const uint64_t copy = add("aten::_to_copy", Phase::kForward, OpCategory::kAutocastCast,
                                  module, cast, 2, {"float"}, {s}, {"c10::BFloat16"})
                                  .id;
        add("aten::empty_strided", Phase::kForward, OpCategory::kUnchanged, module, copy, 3, {}, {},
            {"c10::BFloat16"});
        add("aten::copy_", Phase::kForward, OpCategory::kUnchanged, module, copy, 3,
            {"c10::BFloat16", "float"}, {s, s}, {"c10::BFloat16"});
      }
      add("aten::t", Phase::kForward, OpCategory::kUnchanged, module, linear, 1, {"c10::BFloat16"},
          {weight}, {"c10::BFloat16"});
      add("aten::addmm", Phase::kForward, OpCategory::kUnchanged, module, linear, 1,
          {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"}, {bias, act, weight},
          {"c10::BFloat16"});
      add("aten::relu", Phase::kForward, OpCategory::kUnchanged, module, 0, 0, {"c10::BFloat16"},
          {act}, {"c10::BFloat16"});
    }
    for (int l = kLayers - 1; l >= 0; --l) {
      const std::string module = "layers." + std::to_string(l);
      const uint64_t relu_node =
          add("autograd::engine::evaluate_function: ReluBackward0", Phase::kBackward,
              OpCategory::kUnchanged, module, 0, 0, {}, {}, {})
              .id;
      ops.back().autograd_node = true;
      add("aten::threshold_backward", Phase::kBackward, OpCategory::kUnchanged, module, relu_node,
          1, {"c10::BFloat16", "c10::BFloat16"}, {act, act}, {"c10::BFloat16"});
      const uint64_t addmm_node =
          add("autograd::engine::evaluate_function: AddmmBackward0", Phase::kBackward,
              OpCategory::kUnchanged, module, 0, 0, {}, {}, {})
              .id;
      ops.back().autograd_node = true;
      for (int k = 0; k < 3; ++k) {
        add("aten::t", Phase::kBackward, OpCategory::kUnchanged, module, addmm_node, 1,
            {"c10::BFloat16"}, {weight}, {"c10::BFloat16"});
        add("aten::mm", Phase::kBackward, OpCategory::kUnchanged, module, addmm_node, 1,
            {"c10::BFloat16", "c10::BFloat16"}, {act, weight}, {"c10::BFloat16"});
      }
      add("aten::sum", Phase::kBackward, OpCategory::kUnchanged, module, addmm_node, 1,
          {"c10::BFloat16"}, {act}, {"c10::BFloat16"});
      for (const Shape& s : {weight, bias}) {
        const uint64_t node =
            add("autograd::engine::evaluate_function: ToCopyBackward0", Phase::kBackward,
                OpCategory::kUnchanged, module, 0, 0, {}, {}, {})
                .id;
        ops.back().autograd_node = true;
        add("aten::to", Phase::kBackward, OpCategory::kExplicitCast, module, node, 1,
            {"c10::BFloat16"}, {s}, {"float"});
        add("aten::add_", Phase::kBackward, OpCategory::kUnchanged, module, node, 1,
            {"float", "float"}, {s, s}, {"float"});
      }
    }
    ++step;
    return ops;
  }
};

std::string scratch_path() {
  return (std::filesystem::temp_directory_path() /
          ("ampscope-bench-store-" + std::to_string(::getpid()) + ".ampscope"))
      .string();
}

// Steps of ops through a SessionWriter, closed (all written) inside the timing.
// Counters: ops stored per second of the writer, and the file's bytes per op.
void BM_WriteOps(benchmark::State& state) {
  const int steps = static_cast<int>(state.range(0));
  const std::string path = scratch_path();
  StepBuilder builder;
  std::vector<std::vector<OpRecord>> stream;
  for (int s = 0; s < steps; ++s) stream.push_back(builder.next_step());
  int64_t ops = 0;
  double bytes_per_op = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::filesystem::remove(path);
    std::vector<std::vector<OpRecord>> copy = stream;
    SessionWriterOptions options;
    options.overwrite = true;
    options.queue_capacity =
        copy.size() + 16;  // nothing dropped: the writer's cost per op is the figure
    auto writer = SessionWriter::create(path, SessionMeta{}, options);
    state.ResumeTiming();
    for (auto& step_ops : copy) {
      ops += static_cast<int64_t>(step_ops.size());
      writer->append_ops(std::move(step_ops));
    }
    writer->close();
    state.PauseTiming();
    bytes_per_op = static_cast<double>(std::filesystem::file_size(path)) /
                   static_cast<double>(stream.size() * stream.front().size());
    state.ResumeTiming();
  }
  std::filesystem::remove(path);
  state.counters["ops_per_s"] =
      benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
  state.counters["file_bytes_per_op"] = bytes_per_op;
}
BENCHMARK(BM_WriteOps)->Arg(20)->Unit(benchmark::kMillisecond)->UseRealTime();

// Every op of the session read back, as the GUI's op table and the exporters do.
void BM_ReadOps(benchmark::State& state) {
  const int steps = static_cast<int>(state.range(0));
  const std::string path = scratch_path();
  std::filesystem::remove(path);
  {
    StepBuilder builder;
    auto writer = SessionWriter::create(path, SessionMeta{});
    for (int s = 0; s < steps; ++s) writer->append_ops(builder.next_step());
    writer->close();
  }
  int64_t ops = 0;
  for (auto _ : state) {
    const SessionReader reader = SessionReader::open(path);
    reader.for_each_op(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                       [&](const OpRecord& op) {
                         benchmark::DoNotOptimize(op.id);
                         ++ops;
                       });
  }
  std::filesystem::remove(path);
  state.counters["ops_per_s"] =
      benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReadOps)->Arg(20)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
