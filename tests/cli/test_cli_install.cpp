// `cmake --install` makes a tree that works wherever it is put: the installed
// `ampscope`, moved to another directory and run from a third, trains,
// profiles, summarises and reports, and finds its resource tables beside itself
// (not through the source tree, which a copied binary used to need).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::test::ScratchDir;
namespace fs = std::filesystem;

struct ShellResult {
  int exit_code;
  std::string output;
};

ShellResult sh(const std::string& command) {
  ShellResult r;
  r.exit_code = ampscope::test::run_command(command + " 2>&1", &r.output);
  return r;
}

TEST(CliInstall, TheInstalledTreeWorksAfterItWasMovedAndFromAnotherDirectory) {
  ScratchDir scratch;
  const fs::path staged = scratch / "staged";
  ShellResult r = sh(fmt::format("'{}' --install '{}' --prefix '{}'", AMPSCOPE_CMAKE, AMPSCOPE_BUILD_DIR, staged.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path prefix = scratch / "moved";
  fs::rename(staged, prefix);
  const fs::path work = scratch / "elsewhere";
  fs::create_directory(work);
  const fs::path cli = prefix / "bin" / "ampscope";
  ASSERT_TRUE(fs::exists(cli));
  ASSERT_TRUE(fs::exists(prefix / "share" / "ampscope" / "tensor_core_kernels.txt"));
  ASSERT_TRUE(fs::exists(prefix / "share" / "ampscope" / "gpu_peaks.txt"));
  auto installed = [&](const std::string& args) {
    // Without the environment overrides, so the tables must be found from the program's path.
    return sh(fmt::format("cd '{}' && env -u AMPSCOPE_TENSOR_CORE_RULES -u AMPSCOPE_GPU_PEAKS '{}' {}", work.string(),
                          cli.string(), args));
  };

  r = installed("--version");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string resources = (prefix / "share" / "ampscope").string();
  EXPECT_NE(r.output.find("resources " + resources + "\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(resources + "/tensor_core_kernels.txt: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Tensor Core kernel rules"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("peak figures of"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("cannot be used"), std::string::npos) << r.output;

  const std::string tiny = "--model mlp --device cpu --width 16 --batch-size 8 --synthetic-samples 64";
  r = installed(fmt::format("train {} --steps 3", tiny));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("finished after 3 of 3 steps"), std::string::npos) << r.output;
  r = installed(fmt::format("profile {} --steps 3 --quiet --out s.ampscope", tiny));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(work / "s.ampscope"));
  r = installed("summary s.ampscope");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("steps     3"), std::string::npos) << r.output;
  r = installed("report s.ampscope -o r.html");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(work / "r.html"));

  // Every installed program finds its shared libraries.
  for (const auto& entry : fs::directory_iterator(prefix / "bin")) {
    r = sh(fmt::format("ldd '{}'", entry.path().string()));
    EXPECT_EQ(r.output.find("not found"), std::string::npos) << entry.path() << "\n" << r.output;
  }
}

}  // namespace
