#include "app/cli/train_command.h"

#include "app/cli/run_session.h"

namespace ampscope::cli {
TrainCommand::TrainCommand(CLI::App& parent) {
  command_ = parent.add_subcommand("train", "Train a model in fp32, fp16 (autocast + loss scaler) or bf16");
  // --config belongs to the main app (CLI11 reads config files there); fallthrough
  // lets `ampscope train --config FILE` reach it.
  command_->fallthrough();
  command_->footer(
      "Flags can also come from a TOML file: ampscope train --config FILE, with the flags' long "
      "names as keys in a [train] section (e.g. precision = \"bf16\"). The command line wins.");
  options_.add_to(*command_);
  add_output_flags(*command_, output_);
}

int TrainCommand::run() {
  const engine::TrainConfig config = options_.finish(*command_);
  check_session_outputs(output_, config);
  return run_session(config, {}, output_);
}

}  // namespace ampscope::cli
