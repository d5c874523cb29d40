#include "engine/data/file_bytes.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include "engine/data/load_stop.h"
#include "engine/errors.h"

namespace ampscope::engine::data {

PathKind path_kind(const std::string& path) {
  struct stat info {};
  if (path.empty() || ::stat(path.c_str(), &info) != 0) return PathKind::kMissing;
  if (S_ISREG(info.st_mode)) return PathKind::kFile;
  if (S_ISDIR(info.st_mode)) return PathKind::kDirectory;
  return PathKind::kOther;
}

std::string read_file_bytes(const std::string& path, std::string_view what) {
  const PathKind kind = path_kind(path);
  if (kind == PathKind::kMissing) {
    throw DataError(fmt::format("{} '{}': no such file", what, path));
  }
  if (kind == PathKind::kDirectory) {
    throw DataError(fmt::format("{} '{}': is a directory, expected a file", what, path));
  }
  if (kind == PathKind::kOther) {
    throw DataError(fmt::format("{} '{}': not a regular file", what, path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("{} '{}': cannot be opened for reading", what, path));
  in.seekg(0, std::ios::end);
  const std::streamoff length = in.tellg();
  if (length < 0) throw DataError(fmt::format("{} '{}': cannot be read", what, path));
  in.seekg(0, std::ios::beg);
  std::string bytes(static_cast<size_t>(length), '\0');
  // In chunks, so a stop need not wait for gigabytes to be read.
  constexpr std::streamoff kChunk = 64 << 20;
  for (std::streamoff done = 0; done < length; done += kChunk) {
    throw_if_load_stopped();
    const std::streamoff n = std::min(kChunk, length - done);
    if (!in.read(bytes.data() + done, n)) throw DataError(fmt::format("{} '{}': cannot be read", what, path));
  }
  return bytes;
}

std::string file_name_of(const std::string& path) {
  const std::filesystem::path p(path);
  std::string name = p.filename().string();
  // A directory given with a trailing slash has an empty filename.
  if (name.empty()) name = p.parent_path().filename().string();
  return name.empty() ? path : name;
}

uint32_t read_be_u32(const std::string& bytes, size_t offset) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data() + offset);
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

}  // namespace ampscope::engine::data
