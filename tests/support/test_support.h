#pragma once
// Helpers shared by the test programs: scratch directories, files, and the
// optional Python torch used as a reference peer.
#include <filesystem>
#include <optional>
#include <string>

namespace ampscope::test {

// A fresh directory under the system temp dir, removed when the object dies.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

void write_file(const std::filesystem::path& path, const std::string& bytes);
// The whole file; "" when it cannot be read.
std::string read_file(const std::filesystem::path& path);

// The Python interpreter with torch that configure found (AMPSCOPE_PYTHON), if any.
std::optional<std::string> python_with_torch();

// Whether that Python also has the model libraries tests compare against
// (torchvision and transformers: PYTHON_TEST_PACKAGES in scripts/deps.env).
bool python_peers_installed();
// Whether the test Python imports these modules ("transformers, accelerate").
bool python_can_import(const std::string& modules);

// Runs a command through the shell; returns its exit status and captures stdout.
int run_command(const std::string& command, std::string* stdout_text = nullptr);

// Absolute path of a file under tests/.
std::filesystem::path test_source_path(const std::string& relative);

}  // namespace ampscope::test
