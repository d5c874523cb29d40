// libFuzzer target: `ampscope train --config FILE`, the TOML config, parsed and
// validated as the CLI does (ampscope's strict check of the file, CLI11's config
// reader, then TrainOptions::finish). Without the strict check CLI11 2.1's reader
// crashes on an unterminated array (`model =[t`): the check refuses it first.
#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>

#include "app/cli/config_file_check.h"
#include "app/cli/train_options.h"
#include "engine/errors.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ampscope::fuzz::write_input("run.toml", ampscope::fuzz::as_view(data, size));
  CLI::App app{"fuzz"};
  app.set_config("--config");
  CLI::App* train = app.add_subcommand("train");
  ampscope::cli::TrainOptions options;
  options.add_to(*train);
  std::string arg0 = "ampscope", arg1 = "--config", arg2 = path, arg3 = "train";
  char* argv[] = {arg0.data(), arg1.data(), arg2.data(), arg3.data()};
  try {
    ampscope::cli::check_config_file(app, 4, argv);
    app.parse(4, argv);
    (void)options.finish(*train);
  } catch (const CLI::Error&) {
  } catch (const ampscope::engine::EngineError&) {
  }
  return 0;
}
