#pragma once
// `ampscope diff EAGER COMPILED`: the same model run eagerly and under
// torch.compile, side by side (profiler/analysis/eager_vs_compiled.h): per module,
// the dtypes autocast ran its GEMMs, convolutions and attention in, in both runs;
// step and phase time; the compiled regions' time per call. Text, or --json; --html
// writes the same as a self-contained page in the report's style.
#include <CLI/CLI.hpp>

#include <string>

namespace ampscope::cli {

class DiffCommand {
 public:
  explicit DiffCommand(CLI::App& parent);
  bool selected() const { return command_->parsed(); }
  int run();

 private:
  CLI::App* command_;
  std::string eager_, compiled_;
  bool json_ = false;
  std::string html_;
  bool force_ = false;
};

}  // namespace ampscope::cli
