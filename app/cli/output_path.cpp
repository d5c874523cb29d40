#include "app/cli/output_path.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/errors.h"
#include "profiler/store/session_writer.h"

namespace ampscope::cli {
namespace {

// stat, not std::filesystem: see engine/models/torchscript_model.cpp (pytorch/pytorch#133437).
std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

void check_not_empty(const std::string& flag, const std::string& path) {
  if (path.empty()) throw engine::ConfigError(fmt::format("{} is empty; give a file name", flag));
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

// The same file, whatever the spelling (a link, "./", a second hard link).
bool same_file(const struct stat& a, const std::string& other) {
  struct stat b {};
  return ::stat(other.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

void check_output_file(const std::string& flag, const std::string& path, bool overwrite,
                       const std::vector<std::string>& inputs, bool session) {
  check_not_empty(flag, path);
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode))
      throw engine::ConfigError(
          fmt::format("{} '{}' is a directory; give a file name inside it", flag, path));
    // Before "exists": --force must not be offered for what it can never do.
    for (const auto& input : inputs)
      if (!input.empty() && same_file(info, input))
        throw engine::ConfigError(
            fmt::format("{} '{}' is the input '{}': it would overwrite its own input; choose another {}", flag,
                        path, input, flag));
    if (profiler::is_live_session(path))
      throw engine::ConfigError(fmt::format(
          "{} '{}' is a session another ampscope run is recording now; choose another {}", flag, path, flag));
    if (!overwrite) throw engine::ConfigError(fmt::format("{} '{}' exists; add --force to overwrite it", flag, path));
    if (session && S_ISREG(info.st_mode))
      if (const std::string why = profiler::why_not_replaceable(path); !why.empty())
        throw engine::ConfigError(fmt::format("{} '{}': {}; choose another {}", flag, path, why, flag));
  }
  check_parent(flag, path);
}

void check_output_directory(const std::string& flag, const std::string& path) {
  check_not_empty(flag, path);
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (!S_ISDIR(info.st_mode))
      throw engine::ConfigError(fmt::format("{} '{}' is a file; it takes a directory", flag, path));
    return;
  }
  check_parent(flag, path);
}

}  // namespace ampscope::cli
