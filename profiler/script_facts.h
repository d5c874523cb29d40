#pragma once
// A Python session (`ampscope run`, `import ampscope`) shown as itself: what the
// script was and what the capture saw it use, from the session's meta. The one
// source of these facts for `summary`, the HTML report and the GUI's Run panel,
// so a session captured from a script never shows the built-in run's settings.
// No LibTorch.
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "profiler/capture_settings.h"

namespace ampscope::profiler {

// How `ampscope run` ran a script (meta_key::kScriptCommand): enough to run it again as it ran.
struct ScriptCommand {
  std::string python;             // the interpreter (sys.executable)
  std::string working_directory;  // where it ran: a relative `script` is relative to it
  bool module = false;            // `script` is a module's name, run as `python -m` runs it
  std::string script;
  std::vector<std::string> arguments;
  // Under torchrun (`ranks`): its processes in all, and on each node, and which this one was;
  // 1, 1 and 0 for one process.
  int64_t world_size = 1;
  int64_t local_world_size = 1;
  int64_t rank = 0;
  bool on_several_nodes() const { return local_world_size < world_size; }
};

// nullopt for a value that is not such an object (a session written before the key, or damaged).
std::optional<ScriptCommand> parse_script_command(const std::string& json);

// One mixed-precision policy of FSDP's on the script's models (meta_key::kSharding). FSDP casts
// the parameters to param_dtype as it gathers them, so the forward and backward compute in it
// without autocast, the sharded parameters staying the optimizer's master weights; gradients
// are reduced across ranks in reduce_dtype.
struct FsdpPolicy {
  std::string api;           // "fully_shard" (FSDP2) or "FullyShardedDataParallel" (FSDP1)
  std::string param_dtype;   // "bf16", "fp16", ...; "" where the parameters compute in their own dtype
  std::string reduce_dtype;  // "" where gradients are reduced in param_dtype (FSDP's default)
  std::string output_dtype;  // fully_shard's: what the forward's outputs are cast to; "" for none
  int64_t modules = 0;       // modules FSDP wraps under this policy
};

struct ScriptFacts {
  std::string script;      // the script's path as given to `ampscope run`
  std::string arguments;   // what followed it (shell-quoted), "" for none
  std::string model;       // "python train.py: Net (12,345 parameters)"
  std::string precision;   // what the script's autocast regions asked for: "fp16", "bf16", "fp32" (none)
  std::string autocast_disabled;  // meta_key::kAutocastDisabled: "cpu", "" when none
  std::string precision_override;  // meta_key::kPrecisionOverride: --precision's, "" when as written
  std::string precision_asked;     // meta_key::kPrecisionAsked: what the overridden regions asked for
  // "bf16" or "fp16" when most of the models' trained parameters are in it (model.half(),
  // .bfloat16(): no fp32 master weights, the optimizer updates them in that precision; a
  // frozen bf16 base under fp32 adapters is not); "" otherwise.
  std::string reduced_parameters;
  // FSDP's policies on the models, and the elements of their DTensor parameters (FSDP2, tensor
  // parallel), whose gradients the range samples read as this rank's shards.
  std::vector<FsdpPolicy> fsdp;
  int64_t sharded_parameters = 0;
  // "bf16"/"fp16" where FSDP's policies cast the parameters to it (every policy that casts
  // casts to the same); "" otherwise.
  std::string fsdp_compute_precision() const;
  // The precision the model computed in, in one word for a title: autocast's where it ran, else
  // the parameters' own (model.bfloat16()) or FSDP's cast of them; "fp32" for none of these.
  std::string compute_precision() const;
  bool scaler = false;     // an enabled GradScaler scaled a loss
  // Its class: "torch.amp.GradScaler", or a subclass's qualified name (FSDP's ShardedGradScaler).
  std::string scaler_class;
  // Whether it checks the gradients for inf/NaN across the ranks (ShardedGradScaler all-reduces
  // each rank's verdict; GradScaler decides on the rank's own gradients, under FSDP its shards).
  bool scaler_syncs_ranks() const;
  std::string optimizers;  // "SGD, Adam", in the order first stepped; "" when none was seen
  std::string device;
  // Where the gradient norm came from, or why there is none ("" never: one of the two).
  std::string grad_norm;
  bool grad_norm_measured = false;
  // clip_grad_norm_ ran before scaler.unscale_, on gradients still multiplied by the loss scale
  // (meta_key::kClipBeforeUnscale): in how many steps, from which, with which max_norm.
  struct ClipBeforeUnscale {
    int64_t steps = 0;
    int64_t first_step = 0;
    double max_norm = std::numeric_limits<double>::quiet_NaN();  // NaN: not a number the capture could read
  };
  std::optional<ClipBeforeUnscale> clip_before_unscale;
  // How the run ended, with why: "finished", "finished: stopped after 30 steps (--max-steps)",
  // "failed: RuntimeError: ...", "not yet: the script runs (pid N)" while its writer runs on
  // this host, or not closed (killed, or still recording on another host).
  std::string ended;
  // A precision comparison of the script (`ampscope run --compare`): the precisions its runs
  // were made in, in the comparison's order; empty for a session.
  std::vector<std::string> compared;
  // How to run it again; nullopt where the file does not say (older, or a script that
  // imported ampscope itself). With the step limit it ran under (--max-steps; 0: none).
  std::optional<ScriptCommand> command;
  int64_t max_steps = 0;
  // The sampling and kernel tracing it was captured with (CaptureSettings::read_meta; what the
  // file does not hold, at its default). A comparison's: only trace_gpu, its profiled runs' (files
  // written before the comparison kept it trace, as the CLI does by default).
  CaptureSettings capture;
};

// "fp32, bf16": the precisions a comparison compared; "" for a session.
std::string compared_precisions(const ScriptFacts& facts);

// Under torchrun: which rank of how many a session is, or a comparison's runs' ranks and how
// their steps were joined (profiler::job_steps); "" for one process.
std::string ranks_text(const ScriptFacts& facts);

// "bf16"/"fp16" when that dtype holds more than half of a parameter_dtypes meta value
// ("bfloat16:9866,float32:10"); "" otherwise.
std::string reduced_parameters(const std::string& parameter_dtypes);

// nullopt unless the session was captured from a Python script (meta kind = "python").
std::optional<ScriptFacts> script_facts(const std::map<std::string, std::string>& meta);
// The facts of a script's precision comparison, from the comparison file's meta (which
// `ampscope run --compare` copies from its first finished run: meta_key::kComparedScriptKeys), with the
// precisions compared; nullopt for a comparison of the built-in models.
std::optional<ScriptFacts> compared_script_facts(const std::map<std::string, std::string>& meta,
                                                 const std::vector<std::string>& variants);

// Label and value rows, in display order: script, arguments, model, precision (and the
// parameters' precision when it is reduced), FSDP and sharding (only then), loss scaler,
// optimizers, device, a rank's place among torchrun's (only then), gradient norm, how it ended.
std::vector<std::pair<std::string, std::string>> fact_rows(const ScriptFacts& facts);

}  // namespace ampscope::profiler
