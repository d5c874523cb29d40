#include "tests/support/test_support.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>

namespace ampscope::test {

ScratchDir::ScratchDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto candidate = std::filesystem::temp_directory_path() /
                     ("ampscope-test-" + std::to_string(rd()) + std::to_string(rd()));
    if (std::filesystem::create_directory(candidate)) {
      path_ = candidate;
      return;
    }
  }
  throw std::runtime_error("cannot create a scratch directory");
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::optional<std::string> python_with_torch() {
  static const std::optional<std::string> found = []() -> std::optional<std::string> {
    std::string py = AMPSCOPE_PYTHON;
    if (py.empty()) return std::nullopt;
    if (run_command("'" + py + "' -c 'import torch' >/dev/null 2>&1") != 0) return std::nullopt;
    return py;
  }();
  return found;
}

bool python_can_import(const std::string& modules) {
  static std::mutex lock;
  static std::map<std::string, bool> known;
  std::lock_guard guard(lock);
  const auto it = known.find(modules);
  if (it != known.end()) return it->second;
  const bool found = python_with_torch() &&
      run_command("'" + *python_with_torch() + "' -c 'import " + modules + "' >/dev/null 2>&1") == 0;
  return known[modules] = found;
}

bool python_peers_installed() { return python_can_import("torchvision, transformers"); }

int run_command(const std::string& command, std::string* stdout_text) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return -1;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    if (stdout_text) stdout_text->append(buffer.data(), n);
  }
  int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::filesystem::path test_source_path(const std::string& relative) {
  return std::filesystem::path(AMPSCOPE_TEST_SOURCE_DIR) / relative;
}

}  // namespace ampscope::test
