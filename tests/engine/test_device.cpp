// What the engine tells about the device it trains on, checked against PyTorch's
// own Python answers where one exists.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "engine/device.h"
#include "tests/support/test_support.h"

namespace ampscope::engine {
namespace {

// The verdict's "bf16 runs in ATen's fallback loops on this CPU" rests on this answer:
// it must be the one Python PyTorch gives on the same machine (the same queries ATen's
// matmul makes), not ampscope's own reading of the CPU's flags.
TEST(CpuMatmulPaths, AreWhatPythonPyTorchSaysOnThisMachine) {
  auto python = test::python_with_torch();
  if (!python) GTEST_SKIP() << "no Python with torch configured (AMPSCOPE_PYTHON)";
  const std::string script =
      "import torch; m = torch.ops.mkldnn; "
      "print(torch.backends.cpu.get_cpu_capability(), int(m._is_mkldnn_bf16_supported()), "
      "int(m._is_mkldnn_fp16_supported()))";
  std::string out;
  ASSERT_EQ(test::run_command(fmt::format("'{}' -c '{}'", *python, script), &out), 0) << out;
  std::istringstream words(out);
  std::string isa;
  int bf16 = -1, fp16 = -1;
  ASSERT_TRUE(words >> isa >> bf16 >> fp16) << out;

  const auto paths = cpu_matmul_paths();
  EXPECT_EQ(paths.isa, isa);
  EXPECT_EQ(paths.onednn_bf16, bf16 == 1);
  EXPECT_EQ(paths.onednn_fp16, fp16 == 1);
}

}  // namespace
}  // namespace ampscope::engine
