#include "app/cli/output_path.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/errors.h"

namespace ampscope::cli {
namespace {

// stat, not std::filesystem: see engine/models/torchscript_model.cpp (pytorch/pytorch#133437).
std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

void check_parent(const std::string& flag, const std::string& path) {
  const std::string parent = parent_of(path);
  struct stat info {};
  if (::stat(parent.c_str(), &info) != 0)
    throw engine::ConfigError(
        fmt::format("{} '{}': the directory '{}' does not exist; create it first", flag, path, parent));
  if (!S_ISDIR(info.st_mode))
    throw engine::ConfigError(
        fmt::format("{} '{}': '{}' is a file, not a directory; choose another {}", flag, path, parent, flag));
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    throw engine::ConfigError(
        fmt::format("{} '{}': the directory '{}' is not writable; choose another {}", flag, path, parent, flag));
}

}  // namespace

void check_output_file(const std::string& flag, const std::string& path, bool overwrite) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode))
      throw engine::ConfigError(
          fmt::format("{} '{}' is a directory; give a file name inside it", flag, path));
    if (!overwrite) throw engine::ConfigError(fmt::format("{} '{}' exists; add --force to overwrite it", flag, path));
  }
  check_parent(flag, path);
}

void check_output_directory(const std::string& flag, const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (!S_ISDIR(info.st_mode))
      throw engine::ConfigError(fmt::format("{} '{}' is a file; it takes a directory", flag, path));
    return;
  }
  check_parent(flag, path);
}

}  // namespace ampscope::cli
