// What File→Open costs on a big session: StoreSessionIO::load(path) and filling
// the op and kernel tables (OpStatsModel, KernelModel), as MainWindow::openSession
// does. The session (10,000,000 kernel records, ~1M ops, 2,500 steps) is generated
// once into /tmp and reused while its kernel count matches; generating takes minutes.
// Goal: ≤ 2 s. AMPSCOPE_BENCH_SESSION overrides the path, AMPSCOPE_BENCH_KERNELS
// the count. Figures go into docs/performance.md.
#include <benchmark/benchmark.h>

#include <QCoreApplication>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "profiler/report/findings.h"
#include "profiler/report/report_data.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_view.h"
#include "profiler/store/session_writer.h"
#include "ui/models/kernel_model.h"
#include "ui/models/op_stats_model.h"
#include "ui/models/store_session_io.h"

namespace {

using namespace ampscope;
using Clock = std::chrono::steady_clock;

constexpr int64_t kKernelsPerStep = 4'000;
constexpr int64_t kKernelsPerOp = 10;
constexpr int64_t kBatchKernels = 100'000;

std::string sessionPath() {
  const char* env = std::getenv("AMPSCOPE_BENCH_SESSION");
  return env && *env ? env : "/tmp/ampscope-bench-10m-kernels.ampscope";
}

int64_t kernelTarget() {
  const char* env = std::getenv("AMPSCOPE_BENCH_KERNELS");
  return env && *env ? std::atoll(env) : 10'000'000;
}

// A few hundred distinct names of the shapes a GPT step launches (GEMMs by tile,
// elementwise and reduction templates, copies), so the name table looks real.
std::vector<std::string> kernelNames() {
  std::vector<std::string> names;
  const char* gemm_tiles[] = {"64x64", "128x64", "128x128", "256x128", "64x256", "128x256"};
  const char* gemm_layouts[] = {"nn", "nt", "tn", "tt"};
  for (const char* prec : {"fp16", "bf16"})
    for (const char* tile : gemm_tiles)
      for (const char* layout : gemm_layouts)
        for (int stages : {3, 4, 5})
          names.push_back(std::string("ampere_") + prec + "_s16816gemm_" + prec + "_" + tile +
                          "_ldg8_f2f_stages_32x" + std::to_string(stages) + "_" + layout);
  const char* functors[] = {"AddFunctor<float>",
                            "MulFunctor<c10::Half>",
                            "GeluCUDAKernelImpl",
                            "FillFunctor<float>",
                            "CUDAFunctor_add<c10::BFloat16>",
                            "sqrt_kernel_cuda",
                            "copy_kernel",
                            "AbsFunctor<float>"};
  for (const char* f : functors)
    for (int vec : {1, 2, 4, 8})
      for (const char* t : {"float", "c10::Half", "c10::BFloat16"})
        names.push_back("void at::native::vectorized_elementwise_kernel<" + std::to_string(vec) +
                        ", at::native::" + f + ", std::array<char*, 3ul> >(int, " + t + ")");
  for (const char* op : {"sum", "max", "mean", "norm", "softmax", "layer_norm"})
    for (int block : {128, 256, 512, 1024})
      names.push_back(std::string("void at::native::reduce_kernel<") + std::to_string(block) +
                      ", 4, at::native::ReduceOp<float, at::native::" + op + "Ops<float> > >");
  names.push_back("Memcpy HtoD");
  names.push_back("Memcpy DtoH");
  names.push_back("Memset");
  return names;
}

void generate(const std::string& path, int64_t target) {
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  profiler::SessionMeta meta;
  meta.ampscope_version = "bench";
  meta.device = "cuda:0";
  meta.device_name = "synthetic";
  meta.model = "gpt (synthetic kernels)";
  meta.data = "synthetic";
  meta.precision = "fp16";
  meta.scaler_enabled = true;
  meta.gpu_tracing = "cupti";
  profiler::SessionWriterOptions options;
  options.overwrite = true;
  options.queue_capacity = 1 << 16;
  auto writer = profiler::SessionWriter::create(path, meta, options);

  const std::vector<std::string> names = kernelNames();
  const char* op_names[] = {"aten::linear",     "aten::matmul",
                            "aten::layer_norm", "aten::gelu",
                            "aten::add",        "aten::softmax",
                            "aten::_to_copy",   "aten::mul",
                            "aten::addmm",      "aten::native_layer_norm_backward"};
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<size_t> pick_name(0, names.size() - 1);
  std::uniform_int_distribution<int64_t> duration(2'000, 400'000);
  std::vector<profiler::KernelRecord> kernels;
  std::vector<profiler::OpRecord> ops;
  kernels.reserve(kBatchKernels);
  int64_t written = 0, step = 0, t = 1'000'000'000;
  uint64_t op_id = 0, correlation = 0;
  const auto begin = Clock::now();
  while (written < target) {
    ++step;
    for (int64_t k = 0; k < kKernelsPerStep && written < target; ++k, ++written) {
      if (k % kKernelsPerOp == 0) {
        profiler::OpRecord op;
        op.id = ++op_id;
        op.step = step;
        op.name = op_names[op_id % std::size(op_names)];
        op.phase = k < kKernelsPerStep / 3 ? profiler::Phase::kForward : profiler::Phase::kBackward;
        op.module = "blocks." + std::to_string((k / 300) % 12) + ".mlp";
        op.start_ns = t;
        op.end_ns = t + 50'000;
        op.input_dtypes = {"c10::Half", "c10::Half"};
        op.output_dtypes = {"c10::Half"};
        ops.push_back(std::move(op));
      }
      profiler::KernelRecord r;
      r.correlation_id = ++correlation;
      r.op_id = op_id;
      r.step = step;
      r.name = names[pick_name(rng)];
      r.kind = r.name.rfind("Mem", 0) == 0 ? (r.name == "Memset" ? profiler::ActivityKind::kMemset
                                                                 : profiler::ActivityKind::kMemcpy)
                                           : profiler::ActivityKind::kKernel;
      r.stream = 7;
      r.start_ns = t;
      r.end_ns = t + duration(rng);
      t = r.end_ns + 1'000;
      r.grid = {132, 4, 1};
      r.block = {128, 1, 1};
      r.registers_per_thread = 128;
      r.tensor_core_by_name = r.name.find("gemm") != std::string::npos;
      kernels.push_back(std::move(r));
      if (static_cast<int64_t>(kernels.size()) == kBatchKernels) {
        // Ops first: the writer resolves a kernel's op name when it stores the kernel.
        writer->append_ops(std::move(ops));
        writer->append_kernels(std::move(kernels));
        ops.clear();
        kernels.clear();
        kernels.reserve(kBatchKernels);
        // Every ~1M kernels: bounds the queue's memory, and a progress line.
        if ((written + 1) % (10 * kBatchKernels) == 0) {
          writer->flush();
          const double s = std::chrono::duration<double>(Clock::now() - begin).count();
          std::printf("  generated %lld / %lld kernels (%.0f s)\n",
                      static_cast<long long>(written + 1), static_cast<long long>(target), s);
          std::fflush(stdout);
        }
      }
    }
    profiler::StepRecord s;
    s.step = step;
    s.loss = 3.0 / (1.0 + step * 0.01);
    s.loss_scale = 65536.0;
    s.step_time_ms = 80.0;
    writer->append_step(s);
  }
  writer->append_ops(std::move(ops));
  writer->append_kernels(std::move(kernels));
  // A stored op table of a few hundred rows, as the profiler's aggregator leaves it.
  std::vector<profiler::OpStats> stats;
  for (int i = 0; i < 600; ++i) {
    profiler::OpStats o;
    o.name = op_names[i % std::size(op_names)];
    o.module = "blocks." + std::to_string(i / 50) + ".layer" + std::to_string(i % 50);
    o.phase = i % 2 ? profiler::Phase::kBackward : profiler::Phase::kForward;
    o.top_level = i % 3 == 0;
    o.input_dtypes = {"c10::Half"};
    o.input_shapes = {{16, 1024, 768}};
    o.output_dtypes = {"c10::Half"};
    o.calls = step;
    o.cpu_time_ns = step * 50'000;
    o.gpu_time_ns = step * 40'000;
    o.kernels = step * 3;
    stats.push_back(std::move(o));
  }
  writer->replace_op_stats(std::move(stats));
  std::printf("  closing (checkpointing the WAL)...\n");
  std::fflush(stdout);
  writer->close();
  if (writer->dropped_batches() > 0 || !writer->last_error().empty())
    std::fprintf(stderr, "  warning: %llu batches dropped; %s\n",
                 static_cast<unsigned long long>(writer->dropped_batches()),
                 writer->last_error().c_str());
  std::printf("  generated %s in %.0f s\n", path.c_str(),
              std::chrono::duration<double>(Clock::now() - begin).count());
}

void ensureSession() {
  const std::string path = sessionPath();
  const int64_t target = kernelTarget();
  if (std::filesystem::exists(path)) {
    try {
      if (profiler::SessionReader::open(path).kernel_count() == target) {
        std::printf("reusing %s (%lld kernels)\n", path.c_str(), static_cast<long long>(target));
        return;
      }
    } catch (const std::exception& e) {
      std::printf("regenerating %s: %s\n", path.c_str(), e.what());
    }
  }
  std::printf("generating %s with %lld kernel records (minutes)...\n", path.c_str(),
              static_cast<long long>(target));
  std::fflush(stdout);
  generate(path, target);
}

void BM_OpenSession(benchmark::State& state) {
  const std::string path = sessionPath();
  ui::StoreSessionIO io;
  ui::OpStatsModel ops;
  ui::KernelModel kernels;
  size_t op_rows = 0, kernel_rows = 0;
  for (auto _ : state) {
    ui::LoadedSession session = std::move(*io.load(path).session);
    if (session.profile) {
      ops.setRows(session.profile->op_stats);
      kernels.setRows(session.profile->top_kernels);
      op_rows = session.profile->op_stats.size();
      kernel_rows = session.profile->top_kernels.size();
    }
    benchmark::DoNotOptimize(session.steps.data());
  }
  state.counters["op_rows"] = static_cast<double>(op_rows);
  state.counters["kernel_rows"] = static_cast<double>(kernel_rows);
  state.counters["kernel_records"] = static_cast<double>(kernelTarget());
}

BENCHMARK(BM_OpenSession)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);

// What File→Open adds to the load above for the Findings pane: the report's verdict and
// recommendations of the loaded view (profiler::session_findings, on a copy of it), which
// StoreSessionIO::load computes on the loader thread.
void BM_SessionFindings(benchmark::State& state) {
  const profiler::SessionView view = profiler::load_session_view(sessionPath(), ui::kGuiViewOptions);
  size_t recommendations = 0;
  for (auto _ : state) {
    const profiler::SessionFindings findings = profiler::session_findings(view);
    recommendations = findings.recommendations.size();
    benchmark::DoNotOptimize(findings.verdict.data());
  }
  state.counters["recommendations"] = static_cast<double>(recommendations);
}

BENCHMARK(BM_SessionFindings)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);

// A built-in run's Findings pane read while the run goes on (ui::RunFindings, every few seconds
// on the loader thread, never on the training thread): the session's report view loaded and
// its findings made, as FileLoader::readFindings does.
void BM_RunFindingsRead(benchmark::State& state) {
  size_t recommendations = 0;
  for (auto _ : state) {
    const profiler::SessionFindings findings = profiler::session_findings(
        profiler::load_session_view(sessionPath(), profiler::kReportViewOptions));
    recommendations = findings.recommendations.size();
    benchmark::DoNotOptimize(findings.verdict.data());
  }
  state.counters["recommendations"] = static_cast<double>(recommendations);
}

BENCHMARK(BM_RunFindingsRead)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);  // the item models are QObjects
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  ensureSession();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
