#include "app/cli/profile_command.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include "app/cli/output_path.h"
#include "engine/errors.h"
#include "profiler/store/session_reader.h"

namespace ampscope::cli {

ProfileCommand::ProfileCommand(CLI::App& parent) {
  command_ = parent.add_subcommand(
      "profile", "Train with the profiler on: autocast decisions per op, CUDA kernels (CUPTI), gradient ranges");
  command_->fallthrough();
  command_->footer("Flags can also come from a TOML file (ampscope profile --config FILE, keys in a [profile] section).");
  options_.add_to(*command_);
  add_output_flags(*command_, output_);
  command_->add_option("--out,-o", out_, "The session file to write (.ampscope, one SQLite file)")
      ->capture_default_str()->group("Profiling");
  for (const auto& field : profiler_options_.capture.fields())
    command_->add_option(field.option->flag, *field.value, field.option->help)
        ->capture_default_str()
        ->group("Profiling");
  command_->add_flag("--no-gpu-trace", no_gpu_trace_, "Do not trace CUDA kernels through CUPTI")->group("Profiling");
}

int ProfileCommand::run() {
  const engine::TrainConfig config = options_.finish(*command_);
  auto& p = profiler_options_;
  if (const auto error = p.capture.error()) throw engine::ConfigError(*error);
  check_output_file("--out", out_, output_.force, input_files(config), /*session=*/true);
  check_session_outputs(output_, config, out_);
  struct stat existing {};
  p.session_path = out_;
  p.overwrite = true;
  p.capture.trace_gpu = !no_gpu_trace_;

  int exit_code = 0;
  std::string gpu_tracing;
  profiler::RecordingHealth health;
  {
    profiler::Profiler profiler(p);
    exit_code = run_session(config, {&profiler}, output_, [&profiler] { return profiler.snapshot(); });
    gpu_tracing = profiler.gpu_tracing();
    health = profiler.health();
  }
  // Nothing lost may go unsaid; a session the writer failed to store is a failed profile.
  if (const std::string lost = profiler::describe(health); !lost.empty()) {
    fmt::print(stderr, "ampscope: {}: {}\n", health.store_error.empty() ? "warning" : "error", lost);
    if (!health.store_error.empty() && exit_code == 0) exit_code = 1;
  }
  if (!gpu_tracing.empty() && gpu_tracing != "cupti") fmt::print("GPU tracing {}\n", gpu_tracing);
  // The session is readable whatever happened to the run; say what it holds.
  if (::stat(out_.c_str(), &existing) != 0) return exit_code;  // the run failed before it started
  try {
    const auto session = profiler::SessionReader::open(out_);
    fmt::print("session {}: {} steps, {} op calls, {} GPU activities\n", out_, session.steps().size(),
               session.op_count(), session.kernel_count());
  } catch (const std::exception& e) {
    fmt::print(stderr, "ampscope: error: the session file could not be read back: {}\n", e.what());
    return 1;
  }
  return exit_code;
}

}  // namespace ampscope::cli
