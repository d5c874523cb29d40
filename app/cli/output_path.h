#pragma once
// The one rule for every file a command writes, checked before any work (a run of an
// hour must not end in "cannot write"): not empty, not a directory, not one of the
// command's inputs, not a session another ampscope run is recording, not an existing
// file unless --force, in a directory that exists. Each refusal is a ConfigError
// (exit 2, a bad flag) naming the flag, the path and what to do.
//
// How the file is then written: exports and reports go to a temporary file renamed
// over the output (profiler::export_detail::write_file_atomically); the session and
// --metrics are written in place as the run goes, so a killed run keeps its steps;
// every write of each is checked (exit 1 with the path and the OS error).
#include <string>
#include <vector>

namespace ampscope::cli {

// A file the command will write. `inputs`: the files it reads (never overwritten,
// --force or not). `session`: the output is a session, which --force may replace only
// when it is one (profiler::why_not_replaceable).
void check_output_file(const std::string& flag, const std::string& path, bool overwrite,
                       const std::vector<std::string>& inputs = {}, bool session = false);

// A directory the command will create or fill (TensorBoard logs, with a new file of its
// own each time): not empty, not a file, and its parent exists.
void check_output_directory(const std::string& flag, const std::string& path);

}  // namespace ampscope::cli
