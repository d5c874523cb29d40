#pragma once
// Output locations checked before any work: a run of an hour must not end in "cannot
// write". Each refusal is a ConfigError (exit 2, a bad flag) naming the flag, the path
// and what to do.
#include <string>

namespace ampscope::cli {

// A file the command will write: not a directory, not an existing file unless
// `overwrite`, in a directory that exists.
void check_output_file(const std::string& flag, const std::string& path, bool overwrite);

// A directory the command will create or fill (TensorBoard logs): not a file, and its
// parent exists.
void check_output_directory(const std::string& flag, const std::string& path);

}  // namespace ampscope::cli
