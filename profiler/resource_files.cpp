#include "profiler/resource_files.h"

#include <filesystem>

namespace ampscope::profiler {

const std::string& resource_dir() {
  static const std::string dir = [] {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
      // AMPSCOPE_INSTALLED_RESOURCES: the install's data dir relative to its bin dir ("../share/ampscope").
      const std::filesystem::path installed = exe.parent_path() / AMPSCOPE_INSTALLED_RESOURCES;
      if (std::filesystem::is_regular_file(installed / "tensor_core_kernels.txt", ec))
        return installed.lexically_normal().string();
    }
    return std::string(AMPSCOPE_RESOURCE_DIR);
  }();
  return dir;
}

std::string resource_path(std::string_view name) { return resource_dir() + "/" + std::string(name); }

}  // namespace ampscope::profiler
