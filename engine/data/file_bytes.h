#pragma once
// Reading data files whole, with errors users can act on.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ampscope::engine::data {

enum class PathKind { kMissing, kFile, kDirectory, kOther };

// What a path names, following symlinks. POSIX stat rather than std::filesystem: the
// LibTorch wheel's libtorch.so exports its own copy of some std::filesystem functions,
// which the dynamic linker may pick over libstdc++'s.
PathKind path_kind(const std::string& path);

// The bytes of a regular file. Throws DataError "<what> '<path>': no such file"
// (or "is a directory", "cannot be read").
std::string read_file_bytes(const std::string& path, std::string_view what);

// The last component of a path, for descriptions ("train-images-idx3-ubyte").
std::string file_name_of(const std::string& path);

// Big-endian uint32 at `offset`; the caller has checked that 4 bytes are there.
uint32_t read_be_u32(const std::string& bytes, size_t offset);

}  // namespace ampscope::engine::data
