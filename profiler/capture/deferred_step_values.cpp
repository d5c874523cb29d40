#include "profiler/capture/deferred_step_values.h"

#include <ATen/ATen.h>
#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <cmath>
#include <limits>
#include <memory>
#include <utility>

namespace ampscope::profiler {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// [loss, grad_norm] as float64 on the values' device; NaN where the step had none.
// The loss adds its parts in float32 in the order given, as `sum(l.float().sum() for l
// in losses)` did in Python, so the stored loss is the value the script would print.
at::Tensor stacked_values(const StepDeviceValues& values) {
  const c10::Device device = values.device();
  auto here = [&](const at::Tensor& t) { return t.device() == device ? t.detach() : t.detach().to(device); };
  at::Tensor loss;
  for (const at::Tensor& part : values.loss_parts) {
    at::Tensor sum = here(part).to(at::kFloat).sum();
    loss = loss.defined() ? loss + sum : sum;
  }
  const auto options = at::TensorOptions().dtype(at::kDouble).device(device);
  return at::stack({loss.defined() ? loss.to(at::kDouble) : at::full({}, kNaN, options),
                    values.grad_norm.defined() ? here(values.grad_norm).to(at::kFloat).reshape({}).to(at::kDouble)
                                               : at::full({}, kNaN, options)});
}

}  // namespace

void DeferredStepValues::hold(StepRecord record) { held_.push_back({std::move(record), {}, {}}); }

void DeferredStepValues::hold(StepRecord record, at::Tensor host, Arrival arrived) {
  held_.push_back({std::move(record), std::move(host), std::move(arrived)});
}

void DeferredStepValues::hold(StepRecord record, const StepDeviceValues& values) {
  if (values.empty()) return hold(std::move(record));
  if (!values.loss_parts.empty()) record.loss = kNaN;  // until read (and if the device fails)
  if (values.grad_norm.defined()) record.grad_norm = kNaN;
  try {
    const at::Tensor on_device = stacked_values(values);
    const c10::Device device = on_device.device();
    if (device.type() != c10::DeviceType::CUDA) {
      // The CPU computed them already; another accelerator is read as before, with a wait.
      return hold(std::move(record), on_device.to(at::kCPU).contiguous(), {});
    }
    at::Tensor host = at::empty({2}, at::TensorOptions().dtype(at::kDouble).pinned_memory(true));
    host.copy_(on_device, /*non_blocking=*/true);
    // After the copy, on the stream that computed the values (the script's current one).
    auto event = std::make_shared<c10::Event>(device.type());
    event->record(c10::impl::VirtualGuardImpl(device.type()).getStream(device));
    hold(std::move(record), std::move(host), [event](bool wait) {
      if (!wait) return event->query() ? ArrivalState::kArrived : ArrivalState::kNotYet;
      event->synchronize();
      return ArrivalState::kArrived;
    });
  } catch (const std::exception&) {
    hold(std::move(record));  // a failed device: the step is stored without them
  }
}

void DeferredStepValues::fill(Held& held) {
  if (!held.host.defined()) return;
  const double* v = held.host.data_ptr<double>();
  if (!std::isnan(v[0])) held.record.loss = v[0];
  if (!std::isnan(v[1])) held.record.grad_norm = v[1];
}

std::vector<StepRecord> DeferredStepValues::take_ready(bool wait) {
  std::vector<StepRecord> ready;
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
    ready.push_back(std::move(front.record));
    held_.pop_front();
  }
  return ready;
}

}  // namespace ampscope::profiler
