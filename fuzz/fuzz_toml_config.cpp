// libFuzzer target: `ampscope train --config FILE`, the TOML config, parsed and
// validated as the CLI does (CLI11's config reader, then TrainOptions::finish).
#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>

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
  const char* argv[] = {"ampscope", "--config", path.c_str(), "train"};
  try {
    app.parse(4, argv);
    (void)options.finish(*train);
  } catch (const CLI::Error&) {
  } catch (const ampscope::engine::EngineError&) {
  }
  return 0;
}
