// The GPU peak table: its format, its errors, and that CUDA's device names find
// the right (most specific) entry with dense datasheet figures.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "profiler/analysis/gpu_peaks.h"

namespace ampscope::profiler {
namespace {

constexpr double kT = 1e12;

std::string error_of(const std::string& text) {
  try {
    parse_gpu_peaks(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(GpuPeaks, ParsesFieldsInTflopsCommentsAndBlankLines) {
  const auto table = parse_gpu_peaks(
      "# a comment\n"
      "\n"
      "  X100, X100-SXM | Example X100 | 10 | 20.5 | 40 | 0 | X100 datasheet  # trailing\n"
      "Y7|Example Y7|1|2|3|4|somewhere");  // no final newline
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[0].name, "Example X100");
  EXPECT_EQ(table[0].patterns, (std::vector<std::string>{"X100", "X100-SXM"}));
  EXPECT_DOUBLE_EQ(table[0].fp32, 10 * kT);
  EXPECT_DOUBLE_EQ(table[0].tf32, 20.5 * kT);
  EXPECT_DOUBLE_EQ(table[0].fp16, 40 * kT);
  EXPECT_DOUBLE_EQ(table[0].bf16, 0);
  EXPECT_EQ(table[0].source, "X100 datasheet");
  EXPECT_DOUBLE_EQ(table[1].bf16, 4 * kT);
}

TEST(GpuPeaks, BadLinesNameTheirLineNumber) {
  EXPECT_NE(error_of("# ok\nA | B | 1 | 2 | 3 | 4\n").find("line 2"), std::string::npos);
  EXPECT_NE(error_of("A | B | 1 | 2 | 3 | 4 | s\nC | D | 1 | x | 3 | 4 | s\n").find("line 2: tf32"),
            std::string::npos);
  EXPECT_NE(error_of("A | B | 1 | 2 | -3 | 4 | s\n").find("line 1: fp16"), std::string::npos);
  EXPECT_NE(error_of("A | B | 1 | 2 | 3 | 4TF | s\n").find("bf16"), std::string::npos);
  EXPECT_NE(error_of("A | B | 1 |  | 3 | 4 | s\n").find("line 1"), std::string::npos);
  EXPECT_NE(error_of("A,,B | B | 1 | 2 | 3 | 4 | s\n").find("empty match pattern"),
            std::string::npos);
  EXPECT_NE(error_of("A | B | 1 | 2 | 3 | 4 | \n").find("missing source"), std::string::npos);
  EXPECT_NE(error_of("A |  | 1 | 2 | 3 | 4 | s\n").find("missing display name"), std::string::npos);
  EXPECT_EQ(error_of("# only comments\n\n"), "");
}

TEST(GpuPeaks, LongestWholeTokenPatternWins) {
  const auto table = parse_gpu_peaks(
      "Z1 | Z1 | 1 | 0 | 0 | 0 | s\n"
      "Z1 PCIe | Z1 PCIe | 2 | 0 | 0 | 0 | s\n"
      "Z10 | Z10 | 3 | 0 | 0 | 0 | s\n"
      "Z1 | Z1 again | 4 | 0 | 0 | 0 | s\n");
  EXPECT_EQ(match_gpu_peak(table, "NVIDIA Z1 PCIe")->name, "Z1 PCIe");
  EXPECT_EQ(match_gpu_peak(table, "nvidia z1 pcie 80gb")->name, "Z1 PCIe");  // case-insensitive
  EXPECT_EQ(match_gpu_peak(table, "NVIDIA Z1-SXM")->name, "Z1");  // a tie: the earlier line
  EXPECT_EQ(match_gpu_peak(table, "NVIDIA Z10")->name, "Z10");    // "Z1" is not a token of "Z10"
  EXPECT_FALSE(match_gpu_peak(table, "NVIDIA Z100"));
  EXPECT_FALSE(match_gpu_peak(table, "NVIDIA XZ1"));
  EXPECT_FALSE(match_gpu_peak(table, ""));
}

struct Device {
  const char* cuda_name;
  const char* entry;
  double fp32, tf32, fp16, bf16;  // TFLOPS, dense
};

// Names as torch.cuda.get_device_name() reports them.
const Device kDevices[] = {
    {"Tesla V100-SXM2-16GB", "NVIDIA V100 SXM2", 15.7, 0, 125, 0},
    {"Tesla V100-SXM2-32GB", "NVIDIA V100 SXM2", 15.7, 0, 125, 0},
    {"Tesla V100-PCIE-16GB", "NVIDIA V100 PCIe", 14, 0, 112, 0},
    {"Tesla V100S-PCIE-32GB", "NVIDIA V100S PCIe", 16.4, 0, 130, 0},
    {"Tesla T4", "NVIDIA T4", 8.1, 0, 65, 0},
    {"NVIDIA A100-SXM4-80GB", "NVIDIA A100", 19.5, 156, 312, 312},
    {"NVIDIA A100-SXM4-40GB", "NVIDIA A100", 19.5, 156, 312, 312},
    {"NVIDIA A100-PCIE-40GB", "NVIDIA A100", 19.5, 156, 312, 312},
    {"NVIDIA A100 80GB PCIe", "NVIDIA A100", 19.5, 156, 312, 312},
    {"NVIDIA A10", "NVIDIA A10", 31.2, 62.5, 125, 125},
    {"NVIDIA A30", "NVIDIA A30", 10.3, 82, 165, 165},
    {"NVIDIA A40", "NVIDIA A40", 37.4, 74.8, 149.7, 149.7},
    {"NVIDIA L4", "NVIDIA L4", 30.3, 60, 121, 121},
    {"NVIDIA L40", "NVIDIA L40", 90.5, 90.5, 181.05, 181.05},
    {"NVIDIA L40S", "NVIDIA L40S", 91.6, 183, 362.05, 362.05},
    {"NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM", 67, 494.7, 989.4, 989.4},
    {"NVIDIA H100", "NVIDIA H100 SXM", 67, 494.7, 989.4, 989.4},
    {"NVIDIA H100 PCIe", "NVIDIA H100 PCIe", 51, 378, 756.5, 756.5},
    {"NVIDIA H100 NVL", "NVIDIA H100 NVL", 60, 417.5, 835.5, 835.5},
    {"NVIDIA H200", "NVIDIA H200 SXM", 67, 494.7, 989.4, 989.4},
    {"NVIDIA H200 NVL", "NVIDIA H200 NVL", 60, 417.5, 835.5, 835.5},
    {"NVIDIA GH200 480GB", "NVIDIA GH200", 67, 494.7, 989.4, 989.4},
    {"NVIDIA B200", "NVIDIA B200", 75, 1100, 2250, 2250},
    {"NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090", 35.6, 35.6, 71, 71},
    {"NVIDIA GeForce RTX 3090 Ti", "NVIDIA GeForce RTX 3090 Ti", 40, 40, 80, 80},
    {"NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090", 82.6, 82.6, 165.2, 165.2},
    {"NVIDIA RTX A6000", "NVIDIA RTX A6000", 38.7, 77.4, 154.8, 154.8},
    {"NVIDIA RTX 6000 Ada Generation", "NVIDIA RTX 6000 Ada", 91.1, 182.1, 364.2, 364.2},
};

TEST(GpuPeaks, ShippedTableFindsCudaDeviceNames) {
  for (const Device& d : kDevices) {
    SCOPED_TRACE(d.cuda_name);
    const auto peak = find_gpu_peak(d.cuda_name);
    ASSERT_TRUE(peak.has_value());
    EXPECT_EQ(peak->name, d.entry);
    EXPECT_DOUBLE_EQ(peak->fp32, d.fp32 * kT);
    EXPECT_DOUBLE_EQ(peak->tf32, d.tf32 * kT);
    EXPECT_DOUBLE_EQ(peak->fp16, d.fp16 * kT);
    EXPECT_DOUBLE_EQ(peak->bf16, d.bf16 * kT);
    EXPECT_FALSE(peak->source.empty());
  }
}

TEST(GpuPeaks, UnknownDevicesAndCpusHaveNoPeak) {
  for (const char* name :
       {"cpu", "", "Intel(R) Xeon(R) Platinum 8480+", "AMD EPYC 7763 64-Core Processor",
        "NVIDIA A10G", "NVIDIA A100X", "NVIDIA GeForce GTX 1080 Ti", "Apple M2"}) {
    EXPECT_FALSE(find_gpu_peak(name).has_value()) << name;
  }
}

TEST(GpuPeaks, ShippedFiguresAreDenseAndOrdered) {
  // Tensor Core rates exceed the CUDA-core fp32 rate and are not the 2:4-sparse
  // ones (those would put H100 fp16 at 1979).
  for (const Device& d : kDevices) {
    const auto peak = find_gpu_peak(d.cuda_name);
    ASSERT_TRUE(peak.has_value());
    EXPECT_GT(peak->fp16, peak->fp32) << d.cuda_name;
    EXPECT_LE(peak->tf32, peak->fp16) << d.cuda_name;
    if (peak->bf16 > 0) {
      EXPECT_DOUBLE_EQ(peak->bf16, peak->fp16) << d.cuda_name;
    }
    EXPECT_LT(peak->fp16, 2500 * kT) << d.cuda_name;
  }
}

TEST(GpuPeaks, PeakForVariant) {
  GpuPeak p;
  p.fp32 = 1;
  p.tf32 = 2;
  p.fp16 = 3;
  p.bf16 = 4;
  EXPECT_EQ(peak_for_variant(p, "fp32"), 1);
  EXPECT_EQ(peak_for_variant(p, "tf32"), 2);
  EXPECT_EQ(peak_for_variant(p, "fp16"), 3);
  EXPECT_EQ(peak_for_variant(p, "bf16"), 4);
  EXPECT_EQ(peak_for_variant(p, "fp8"), 0);
  EXPECT_EQ(peak_for_variant(p, "FP16"), 0);
  EXPECT_EQ(peak_for_variant(*find_gpu_peak("Tesla V100-SXM2-16GB"), "bf16"), 0);  // unsupported
}

// The table is read once per process, so the override is checked in a fresh one.
TEST(GpuPeaksDeathTest, EnvironmentVariableNamesAnotherTable) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string path = ::testing::TempDir() + "ampscope_gpu_peaks_test.txt";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("Test GPU | Test GPU | 1 | 2 | 3 | 4 | test\n", f);
    std::fclose(f);
  }
  EXPECT_EXIT(
      {
        setenv("AMPSCOPE_GPU_PEAKS", path.c_str(), 1);
        const auto mine = find_gpu_peak("Vendor Test GPU 8GB");
        const bool shipped = find_gpu_peak("NVIDIA H100 80GB HBM3").has_value();
        std::exit(mine && mine->fp16 == 3 * kT && !shipped ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        setenv("AMPSCOPE_GPU_PEAKS", (path + ".missing").c_str(), 1);
        try {
          find_gpu_peak("NVIDIA H100");
        } catch (const std::runtime_error& e) {
          std::exit(std::string(e.what()).find("cannot open") != std::string::npos ? 0 : 2);
        }
        std::exit(1);
      },
      ::testing::ExitedWithCode(0), "");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ampscope::profiler
