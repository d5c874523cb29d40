#include "profiler/analysis/warmup_step.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "profiler/number_text.h"
#include "profiler/op_signature.h"
#include "profiler/session_meta_keys.h"

namespace ampscope::profiler {
namespace {

void add_samples(std::vector<int64_t>& into, const std::vector<int64_t>& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) into[i] += from[i];
}

void add_row(OpStats& into, const OpStats& from) {
  into.calls += from.calls;
  into.cpu_time_ns += from.cpu_time_ns;
  into.gpu_time_ns += from.gpu_time_ns;
  into.kernels += from.kernels;
  into.tensor_core_kernels += from.tensor_core_kernels;
  into.tensor_core_gpu_time_ns += from.tensor_core_gpu_time_ns;
  into.cast_calls += from.cast_calls;
  into.cast_bytes += from.cast_bytes;
  into.cast_cpu_time_ns += from.cast_cpu_time_ns;
  into.cast_gpu_time_ns += from.cast_gpu_time_ns;
  add_samples(into.step_cpu_time_ns, from.step_cpu_time_ns);
  add_samples(into.step_gpu_time_ns, from.step_gpu_time_ns);
}

// " (3.4% of the other 19 profiled steps together<more>)": the step's own time against the table's.
std::string against_other_steps(int64_t own_ns, int64_t table_ns, int64_t steps, const std::string& more) {
  if (table_ns <= 0) return more.empty() ? "" : " (" + more.substr(2) + ")";
  const std::string others = "the other " + std::to_string(steps) + (steps == 1 ? " profiled step" : " profiled steps");
  const double ratio = static_cast<double>(own_ns) / static_cast<double>(table_ns);
  return " (" + (ratio >= 1.0 ? text::factor(ratio) : text::percent(ratio) + " of") + " " + others +
         (steps == 1 ? "'s" : " together") + more + ")";
}

// `from`'s rows added into `into`: a row of the same signature (and top-level mark) sums
// into the one there, any other is appended.
void add_rows(std::vector<OpStats>& into, std::vector<OpStats>&& from) {
  for (OpStats& row : from) {
    auto same = std::find_if(into.begin(), into.end(), [&](const OpStats& r) {
      return r.top_level == row.top_level && r.compiled == row.compiled && same_op_signature(r, row);
    });
    if (same == into.end())
      into.push_back(std::move(row));
    else
      add_row(*same, row);
  }
}

}  // namespace

OpTable op_table_without_warmup(std::vector<OpStats> steady, std::vector<OpStats> warmup,
                                bool other_steps_profiled) {
  OpTable table;
  if (warmup.empty() || !other_steps_profiled) {
    table.rows = std::move(warmup);
    add_rows(table.rows, std::move(steady));
    return table;
  }
  // Compiling stays: it is in no category, and compile_time() says how long it took. A
  // compile the step's left-out rows held is no region's work in the table: it stays as
  // a top-level row, so no steady region's time is taken for it.
  WarmupLeftOut left_out;
  std::vector<OpStats> compiles;
  for (OpStats& r : warmup) {
    if (r.name == kTorchCompileOp) {
      if (!r.top_level) {  // out of the left-out time of the row that held it
        left_out.cpu_time_ns -= r.cpu_time_ns;
        left_out.gpu_time_ns -= r.gpu_time_ns;
      }
      r.top_level = true;
      compiles.push_back(std::move(r));
      continue;
    }
    if (!r.top_level) continue;
    left_out.calls += r.calls;
    left_out.cpu_time_ns += r.cpu_time_ns;
    left_out.gpu_time_ns += r.gpu_time_ns;
  }
  left_out.cpu_time_ns = std::max<int64_t>(left_out.cpu_time_ns, 0);
  left_out.gpu_time_ns = std::max<int64_t>(left_out.gpu_time_ns, 0);
  table.rows = std::move(steady);
  add_rows(table.rows, std::move(compiles));
  table.warmup_left_out = left_out;
  return table;
}

std::string warmup_meta_value(const WarmupLeftOut& left_out) {
  nlohmann::json value{{"step", left_out.step},
                       {"calls", left_out.calls},
                       {"cpu_ns", left_out.cpu_time_ns},
                       {"gpu_ns", left_out.gpu_time_ns}};
  if (left_out.kernels_left_out) {
    value["kernels"] = left_out.kernels;
    value["kernel_ns"] = left_out.kernel_gpu_ns;
    value["unattributed_ns"] = left_out.unattributed_gpu_ns;
    value["longest_kernel_ns"] = left_out.longest_kernel_ns;
  }
  return value.dump();
}

std::optional<WarmupLeftOut> warmup_left_out_from_meta(const std::map<std::string, std::string>& meta) {
  const auto it = meta.find(meta_key::kWarmupLeftOut);
  if (it == meta.end()) return std::nullopt;
  return warmup_left_out_from_meta_value(it->second);
}

std::optional<WarmupLeftOut> warmup_left_out_from_meta_value(const std::string& value) {
  const nlohmann::json parsed = nlohmann::json::parse(value, nullptr, false);
  if (!parsed.is_object()) return std::nullopt;
  WarmupLeftOut left_out;
  const auto read = [&](const char* key, int64_t& field) {
    const auto value = parsed.find(key);
    if (value == parsed.end() || !value->is_number_integer()) return false;
    field = value->get<int64_t>();
    return true;
  };
  if (!read("step", left_out.step) || !read("calls", left_out.calls) || !read("cpu_ns", left_out.cpu_time_ns) ||
      !read("gpu_ns", left_out.gpu_time_ns))
    return std::nullopt;
  // Sessions from before the kernel table left the step out have none of these.
  if (parsed.contains("kernels")) {
    if (!read("kernels", left_out.kernels) || !read("kernel_ns", left_out.kernel_gpu_ns) ||
        !read("unattributed_ns", left_out.unattributed_gpu_ns) ||
        !read("longest_kernel_ns", left_out.longest_kernel_ns))
      return std::nullopt;
    left_out.kernels_left_out = true;
  }
  return left_out;
}

std::string warmup_left_out_text(const WarmupLeftOut& left_out, const std::vector<CategoryTotals>& totals,
                                 int64_t steps) {
  int64_t table_cpu_ns = 0, table_gpu_ns = 0;
  for (const CategoryTotals& t : totals) {
    table_cpu_ns += t.cpu_time_ns;
    table_gpu_ns += t.gpu_time_ns;
  }
  const bool gpu = table_gpu_ns > 0 || left_out.gpu_time_ns > 0;
  std::string text = "step " + std::to_string(left_out.step) + " left out as warm-up: its ops took " +
                     text::ns_as_ms(static_cast<double>(left_out.cpu_time_ns)) + " CPU" +
                     against_other_steps(left_out.cpu_time_ns, table_cpu_ns, steps, "");
  if (gpu)
    text += ", " + text::ns_as_ms(static_cast<double>(left_out.gpu_time_ns)) + " GPU" +
            against_other_steps(left_out.gpu_time_ns, table_gpu_ns, steps, "");
  return text + "; one-off costs (lazy initialisation, first allocations) that no later step pays";
}

std::string warmup_kernels_text(const WarmupLeftOut& left_out, const GpuAttribution& table, int64_t steps) {
  if (!left_out.kernels_left_out || left_out.kernels == 0) return "";
  std::string no_op;
  if (left_out.unattributed_gpu_ns > 0)
    no_op = "; " + text::ns_as_ms(static_cast<double>(left_out.unattributed_gpu_ns)) + " of it with no op";
  return "step " + std::to_string(left_out.step) + " left out as warm-up: its " + text::grouped(left_out.kernels) +
         (left_out.kernels == 1 ? " kernel took " : " kernels took ") +
         text::ns_as_ms(static_cast<double>(left_out.kernel_gpu_ns)) +
         against_other_steps(left_out.kernel_gpu_ns, table.traced_ns, steps, no_op);
}

}  // namespace ampscope::profiler
