// TensorBoard event files, read back with TensorBoard's own EventAccumulator
// (tests/python/tensorboard_reader.py): the tags, steps, values and histogram
// counts ampscope wrote. CRC-32C against RFC 3720's vectors.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <string>

#include "profiler/analysis/loss_scale_window.h"
#include "profiler/export/tensorboard/crc32c.h"
#include "profiler/export/tensorboard/tensorboard_export.h"
#include "tests/profiler_core/session_fixture.h"
#include "tests/support/tensorboard_reader.h"
#include "tests/support/test_support.h"

namespace ampscope::test {
namespace {

using namespace profiler::tensorboard;

TEST(Crc32c, Rfc3720TestVectors) {
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending += static_cast<char>(i);
    descending += static_cast<char>(31 - i);
  }
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc32c(descending), 0x113FDB5Cu);
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
}

TEST(TensorBoardExport, ReaderFindsEveryStepScalarAndGradientHistogram) {
  ScratchDir dir;
  const std::string session_path = dir / "run.ampscope";
  const Fixture f = make_fixture();
  write_fixture_file(session_path, f);
  const std::string file = export_session(SessionReader::open(session_path), (dir / "tb").string());
  EXPECT_NE(std::filesystem::path(file).filename().string().find("tfevents"), std::string::npos);

  const auto read = read_with_tensorboard(dir / "tb");
  if (!read) GTEST_SKIP() << "no Python configured (AMPSCOPE_PYTHON)";
  const auto& scalars = (*read)["scalars"];
  for (const char* tag : {"train/loss", "train/lr", "train/grad_norm", "amp/loss_scale", "amp/skipped_steps",
                          "perf/step_time_ms", "perf/samples_per_second"}) {
    ASSERT_TRUE(scalars.contains(tag)) << tag << " in " << scalars.dump();
    ASSERT_EQ(scalars[tag].size(), f.steps.size()) << tag;
  }
  int64_t skipped = 0;
  for (size_t i = 0; i < f.steps.size(); ++i) {
    const auto& s = f.steps[i];
    skipped += s.skipped ? 1 : 0;
    EXPECT_EQ(scalars["train/loss"][i][0], s.step);
    EXPECT_EQ(scalars["train/loss"][i][1].get<double>(), static_cast<float>(s.loss));
    EXPECT_EQ(scalars["amp/loss_scale"][i][1].get<double>(), static_cast<float>(s.loss_scale));
    EXPECT_EQ(scalars["amp/skipped_steps"][i][1].get<double>(), static_cast<double>(skipped));
  }
  EXPECT_GT(skipped, 0) << "the fixture should skip a step";
  // A CUDA session: the caching allocator's counters.
  for (const char* tag : {"memory/allocated_bytes", "memory/reserved_bytes", "memory/peak_bytes"})
    ASSERT_TRUE(scalars.contains(tag)) << tag << " in " << scalars.dump();
  EXPECT_EQ(scalars["memory/reserved_bytes"][0][1].get<double>(), static_cast<double>(f.steps[0].mem_reserved_bytes));
  EXPECT_FALSE(scalars.contains("memory/resident_set_bytes"));
  // The validation loss only at the steps after which validation ran (fixture: 2 and 4).
  ASSERT_TRUE(scalars.contains("eval/loss")) << scalars.dump();
  EXPECT_EQ(scalars["eval/loss"], nlohmann::json::parse("[[2, 1.25], [4, 0.75]]"));

  // One histogram per parameter per sampled step, with the session's counts.
  const auto& histograms = (*read)["histograms"];
  for (const char* parameter : {"fc1.weight", "fc1.bias"}) {
    const std::string tag = histogram_tag(parameter);
    ASSERT_TRUE(histograms.contains(tag)) << tag << " in " << histograms.dump();
    const auto& events = histograms[tag];
    ASSERT_EQ(events.size(), 2u);  // steps 2 and 4
    size_t k = 0;
    for (const auto& g : f.gradients) {
      if (g.parameter != parameter) continue;
      const auto& e = events[k++];
      EXPECT_EQ(e[0], g.step);
      double total = 0, expected_total = 0;
      for (const auto& count : e[3]) total += count.get<double>();
      for (int64_t c : g.log2_histogram) expected_total += static_cast<double>(c);
      EXPECT_EQ(e[1].get<double>(), expected_total);
      EXPECT_EQ(total, expected_total);
      // Bucket limits are the upper edges of the session's log2 bins: bin 40 is log2|g| in [-24, -23).
      const auto& limits = e[2];
      bool found = false;
      for (size_t b = 0; b < limits.size(); ++b)
        if (limits[b].get<double>() == profiler::kGradLog2Min + 40 + 1) {
          EXPECT_EQ(e[3][b].get<double>(), 10.0);
          found = true;
        }
      EXPECT_TRUE(found) << e.dump();
    }
  }
  // The format shares over all parameters, per sampled step (fixture: fp8 e4m3 underflow 0.5).
  ASSERT_TRUE(scalars.contains("grad_range/fp8_e4m3/underflow")) << scalars.dump();
  EXPECT_EQ(scalars["grad_range/fp8_e4m3/underflow"].size(), 2u);
  EXPECT_EQ(scalars["grad_range/fp8_e4m3/underflow"][0][1].get<double>(), 0.5);
  ASSERT_TRUE(scalars.contains("grad_range/fp16/overflow"));
  // The sampled gradients' total norm (a script that does not clip has no train/grad_norm):
  // the fixture's two parameters have norm 7.25 each at both sampled steps.
  ASSERT_TRUE(scalars.contains("grad_range/norm")) << scalars.dump();
  ASSERT_EQ(scalars["grad_range/norm"].size(), 2u);
  EXPECT_EQ(scalars["grad_range/norm"][0][0].get<int64_t>(), 2);
  EXPECT_NEAR(scalars["grad_range/norm"][0][1].get<double>(), 7.25 * std::sqrt(2.0), 1e-5);
  // The fixture is an fp16 run: no fp16 loss-scale window (its backward flushed already).
  EXPECT_FALSE(scalars.contains("grad_range/fp16_loss_scale/lowest_log2")) << scalars.dump();
}

// A bf16 run logs, at each gradient sample, the loss scales at which fp16 would carry its
// gradients, as summary and the report give them.
TEST(TensorBoardExport, ABf16RunLogsTheFp16LossScaleWindowPerSample) {
  ScratchDir dir;
  const std::string session_path = dir / "bf16.ampscope";
  Fixture f = make_fixture();
  f.meta.precision = "bf16";
  write_fixture_file(session_path, f);
  const SessionReader session = SessionReader::open(session_path);
  export_session(session, (dir / "tb").string());
  const auto read = read_with_tensorboard(dir / "tb");
  if (!read) GTEST_SKIP() << "no Python configured (AMPSCOPE_PYTHON)";
  const auto& scalars = (*read)["scalars"];
  for (const char* bound : {"lowest_log2", "highest_log2"}) {
    const std::string tag = std::string("grad_range/fp16_loss_scale/") + bound;
    ASSERT_TRUE(scalars.contains(tag)) << tag << " in " << scalars.dump();
    const auto& events = scalars[tag];
    ASSERT_EQ(events.size(), 2u);  // steps 2 and 4
    for (const auto& e : events) {
      const auto window = profiler::loss_scale_window(session.gradients(e[0].get<int64_t>()));
      ASSERT_TRUE(window);
      EXPECT_EQ(e[1].get<double>(), bound[0] == 'l' ? window->lowest_log2 : window->highest_log2) << tag;
    }
  }
}

// On the CPU a step's memory is the process's resident set and its peak: tagged as such,
// not as tensors' allocations (an interpreter and its libraries are most of it).
TEST(TensorBoardExport, ACpuRunsMemoryIsTaggedAsTheResidentSet) {
  ScratchDir dir;
  const std::string session_path = dir / "cpu.ampscope";
  Fixture f = make_fixture();
  f.meta.device = "cpu";
  for (auto& s : f.steps) s.mem_reserved_bytes = s.mem_allocated_bytes;  // as the CPU's sample has it
  write_fixture_file(session_path, f);
  export_session(SessionReader::open(session_path), (dir / "tb").string());
  const auto read = read_with_tensorboard(dir / "tb");
  if (!read) GTEST_SKIP() << "no Python configured (AMPSCOPE_PYTHON)";
  const auto& scalars = (*read)["scalars"];
  for (const char* tag : {"memory/allocated_bytes", "memory/reserved_bytes", "memory/peak_bytes"})
    EXPECT_FALSE(scalars.contains(tag)) << tag;
  ASSERT_TRUE(scalars.contains("memory/resident_set_bytes")) << scalars.dump();
  ASSERT_TRUE(scalars.contains("memory/peak_resident_set_bytes")) << scalars.dump();
  ASSERT_EQ(scalars["memory/resident_set_bytes"].size(), f.steps.size());
  for (size_t i = 0; i < f.steps.size(); ++i) {
    EXPECT_EQ(scalars["memory/resident_set_bytes"][i][1].get<double>(),
              static_cast<double>(f.steps[i].mem_allocated_bytes));
    EXPECT_EQ(scalars["memory/peak_resident_set_bytes"][i][1].get<double>(),
              static_cast<double>(f.steps[i].mem_peak_bytes));
  }
}

TEST(TensorBoardExport, AnUnwritableDirectoryIsAClearError) {
  ScratchDir dir;
  write_file(dir / "file", "x");
  try {
    EventFileWriter writer((dir / "file" / "tb").string());
    FAIL() << "no error";
  } catch (const profiler::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create the TensorBoard directory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ampscope::test
