#include "profiler/capture/deferred_step_values.h"

#include <ATen/ATen.h>
#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

namespace ampscope::profiler {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using Slot = DeferredStepValues::Slot;

// The slots (DeferredStepValues::Slot) as float64 on the values' device; NaN where the
// step had none. The loss adds its parts in float32 in the order given, as `sum(l.float()
// .sum() for l in losses)` did in Python, so the stored loss is the value the script
// would print; each optimizer's found-inf flags add up over devices, as GradScaler.step
// sums them.
at::Tensor stacked_values(const StepDeviceValues& values) {
  const c10::Device device = values.device();
  auto here = [&](const at::Tensor& t) { return t.device() == device ? t.detach() : t.detach().to(device); };
  const auto options = at::TensorOptions().dtype(at::kDouble).device(device);
  auto scalar = [&](const at::Tensor& t) {
    return t.defined() ? here(t).to(at::kDouble).reshape({}) : at::full({}, kNaN, options);
  };
  at::Tensor loss;
  for (const at::Tensor& part : values.loss_parts) {
    at::Tensor sum = here(part).to(at::kFloat).sum();
    loss = loss.defined() ? loss + sum : sum;
  }
  // The norm through float32 first, as the script's .item() of a float32 norm reads it.
  const at::Tensor norm = values.grad_norm.defined() ? here(values.grad_norm).to(at::kFloat) : at::Tensor();
  std::vector<at::Tensor> slots{scalar(loss), scalar(norm), scalar(values.loss_scale), scalar(values.growth_tracker),
                                scalar(values.loss_scale_after)};
  for (const std::vector<at::Tensor>& flags : values.found_inf) {
    at::Tensor found;
    for (const at::Tensor& f : flags) found = found.defined() ? found + here(f).sum() : here(f).sum();
    slots.push_back(scalar(found));
  }
  return at::stack(slots);
}

}  // namespace

bool StepDeviceValues::empty() const {
  return loss_parts.empty() && !grad_norm.defined() && !loss_scale.defined() && !growth_tracker.defined() &&
         !loss_scale_after.defined() &&
         std::all_of(found_inf.begin(), found_inf.end(), [](const auto& flags) { return flags.empty(); });
}

c10::Device StepDeviceValues::device() const {
  if (!loss_parts.empty()) return loss_parts.front().device();
  for (const at::Tensor* t : {&grad_norm, &loss_scale, &growth_tracker, &loss_scale_after})
    if (t->defined()) return t->device();
  for (const auto& flags : found_inf)
    if (!flags.empty()) return flags.front().device();
  return c10::Device(c10::kCPU);
}

at::Tensor scaler_state_copy(const at::Tensor& scale, const at::Tensor& growth_tracker,
                             const std::vector<std::vector<at::Tensor>>& found_inf) {
  const c10::Device device = scale.device();
  auto one = [&](const at::Tensor& t) { return t.detach().reshape({1}).to(device, at::kDouble); };
  std::vector<at::Tensor> parts{one(scale), one(growth_tracker)};
  for (const std::vector<at::Tensor>& flags : found_inf) {
    at::Tensor sum;
    for (const at::Tensor& f : flags) sum = sum.defined() ? sum + one(f.sum()) : one(f.sum());
    parts.push_back(sum.defined() ? sum : at::full({1}, kNaN, at::TensorOptions().dtype(at::kDouble).device(device)));
  }
  return at::cat(parts);
}

void DeferredStepValues::hold(StepRecord record, std::vector<OptimizerStepRecord> rows) {
  held_.push_back({std::move(record), std::move(rows), {}, {}});
}

void DeferredStepValues::hold(StepRecord record, std::vector<OptimizerStepRecord> rows, at::Tensor host,
                              Arrival arrived) {
  held_.push_back({std::move(record), std::move(rows), std::move(host), std::move(arrived)});
}

void DeferredStepValues::hold(StepRecord record, std::vector<OptimizerStepRecord> rows,
                              const StepDeviceValues& values) {
  if (values.empty()) return hold(std::move(record), std::move(rows));
  // Until read (and if the device fails): unknown, not a value the step never had.
  if (!values.loss_parts.empty()) record.loss = kNaN;
  if (values.grad_norm.defined()) record.grad_norm = kNaN;
  if (values.loss_scale.defined()) record.loss_scale = kNaN;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (values.loss_scale.defined()) rows[i].loss_scale = kNaN;
    if (values.loss_scale_after.defined()) rows[i].loss_scale_after = kNaN;
  }
  try {
    const at::Tensor on_device = stacked_values(values);
    const c10::Device device = on_device.device();
    if (device.type() != c10::DeviceType::CUDA) {
      // The CPU computed them already; another accelerator is read as before, with a wait.
      return hold(std::move(record), std::move(rows), on_device.to(at::kCPU).contiguous(), {});
    }
    at::Tensor host = at::empty({on_device.numel()}, at::TensorOptions().dtype(at::kDouble).pinned_memory(true));
    host.copy_(on_device, /*non_blocking=*/true);
    // After the copy, on the stream that computed the values (the script's current one).
    auto event = std::make_shared<c10::Event>(device.type());
    event->record(c10::impl::VirtualGuardImpl(device.type()).getStream(device));
    hold(std::move(record), std::move(rows), std::move(host), [event](bool wait) {
      if (!wait) return event->query() ? ArrivalState::kArrived : ArrivalState::kNotYet;
      event->synchronize();
      return ArrivalState::kArrived;
    });
  } catch (const std::exception&) {
    hold(std::move(record), std::move(rows));  // a failed device: the step is stored without them
  }
}

void DeferredStepValues::hold_scheduler_steps(std::vector<SchedulerStepRecord> calls) {
  for (SchedulerStepRecord& call : calls) scheduler_calls_.push_back(std::move(call));
}

void DeferredStepValues::fill(Held& held) {
  if (!held.host.defined()) return;
  const double* v = held.host.data_ptr<double>();
  const auto slots = static_cast<size_t>(held.host.numel());
  auto value = [&](size_t slot) { return slot < slots ? v[slot] : kNaN; };
  StepRecord& r = held.record;
  if (!std::isnan(value(Slot::kLoss))) r.loss = value(Slot::kLoss);
  if (!std::isnan(value(Slot::kGradNorm))) r.grad_norm = value(Slot::kGradNorm);
  if (!std::isnan(value(Slot::kLossScale))) r.loss_scale = value(Slot::kLossScale);
  if (!std::isnan(value(Slot::kGrowthTracker))) r.growth_tracker = static_cast<int64_t>(value(Slot::kGrowthTracker));
  for (size_t i = 0; i < held.rows.size(); ++i) {
    OptimizerStepRecord& row = held.rows[i];
    if (!std::isnan(value(Slot::kLossScale))) row.loss_scale = value(Slot::kLossScale);
    if (!std::isnan(value(Slot::kLossScaleAfter))) row.loss_scale_after = value(Slot::kLossScaleAfter);
    const double found = value(Slot::kFoundInf0 + i);
    // GradScaler.step() skips (or has the fused optimizer skip) exactly where it found one.
    if (!std::isnan(found)) row.found_inf = row.skipped = found > 0;
    r.found_inf = r.found_inf || row.found_inf;
    r.skipped = r.skipped || row.skipped;
  }
}

void DeferredStepValues::release(Held& held, Ready& ready) {
  released_through_ = std::max(released_through_, held.record.step);
  for (const OptimizerStepRecord& row : held.rows)
    last_decision_[row.optimizer] = {row.step, row.skipped};
  // The calls that followed this step (or an earlier one) leave before a later step's
  // rows change what their optimizers decided last.
  release_scheduler_calls(/*all=*/false, ready);
  newest_ready_ = held.record;
  ready.steps.push_back(std::move(held.record));
  for (OptimizerStepRecord& row : held.rows) ready.optimizer_steps.push_back(std::move(row));
}

void DeferredStepValues::release_scheduler_calls(bool all, Ready& ready) {
  while (!scheduler_calls_.empty() && (all || scheduler_calls_.front().step <= released_through_)) {
    SchedulerStepRecord& call = scheduler_calls_.front();
    const auto decided = last_decision_.find(call.optimizer);
    call.after_skipped = decided != last_decision_.end() && decided->second.first == call.step &&
                         decided->second.second;
    ready.scheduler_steps.push_back(std::move(call));
    scheduler_calls_.pop_front();
  }
}

DeferredStepValues::Ready DeferredStepValues::take_ready(bool wait) {
  Ready ready;
  while (!held_.empty()) {
    Held& front = held_.front();
    if (front.arrived) {
      ArrivalState state = ArrivalState::kLost;
      try {
        state = front.arrived(wait || held_.size() > kMaxWaiting);
      } catch (const std::exception&) {
        // The device failed (the script's own error will say how): stored without them.
      }
      if (state == ArrivalState::kNotYet) break;
      if (state == ArrivalState::kArrived) fill(front);
    } else {
      fill(front);
    }
    release(front, ready);
    held_.pop_front();
  }
  release_scheduler_calls(/*all=*/wait, ready);
  return ready;
}

}  // namespace ampscope::profiler
