"""GradScaler's state as the capture reads it: without waiting for the device.

GradScaler keeps its scale, growth tracker and found-inf flags on the device. Reading them
at each step's end (`get_scale()`, `found_inf.item()`) made the host wait for the GPU to
finish the step, a wait per step that an fp16 loop whose optimizer is fused (GradScaler hands
it the flags on the device) never makes by itself. The capture hands them to the core as
tensors instead (python/src/capture_module.cpp end_step); the core reads them when the device
has computed them (profiler/capture/deferred_step_values.h), a step or a few later.

What the capture decides from them at a step's end, which backward to check next
(_backward_origin.py: the step after a skip, and after a growth of the scale, whose probe of
a larger scale is a healthy run's usual overflow), it decides from the newest step the core
has read:
- a step whose backward was checked waits for its values (it waited for the device
  already): within a run of skips every step is checked, as before;
- a skip read late checks the next step: a run of skips that began on an unchecked step
  is caught within one step more than the reads lag (its third step at a lag of one, not
  its second);
- a growth is foreseen from the growth tracker GradScaler's own rule advances by one a step
  (the newest read tracker, plus the steps since): the step after it is checked at once.
"""
from __future__ import annotations


class ScalerState:
    def __init__(self):
        self._read_step = 0      # the newest step whose values the core has read
        self._tracker_after = 0  # GradScaler's growth tracker after that step's update()
        self._skip_unchecked = False  # that step skipped, and no backward was checked for it yet

    def note_read(self, newest, growth_interval: int) -> None:
        """`newest`: the core's newest stored step ({step, skipped, growth_tracker}) or None."""
        if newest is None or newest["step"] <= self._read_step:
            return
        self._read_step = newest["step"]
        tracker = newest["growth_tracker"]
        # GradScaler's rule (torch._amp_update_scale_): a skip or a growth resets it.
        self._tracker_after = 0 if newest["skipped"] or tracker + 1 >= growth_interval else tracker + 1
        self._skip_unchecked = newest["skipped"]

    def check_next(self, step: int, growth_interval: int) -> bool:
        """After step `step` ended (its update() done): whether the next step's backward is
        checked because a skip was read or `step` grew the scale."""
        if self._skip_unchecked:
            self._skip_unchecked = False
            return True
        if self._read_step >= step:  # read at once (it did not skip): it grew where it reset the tracker
            return self._tracker_after == 0
        # Foreseen: the tracker before `step`'s update(), had no step since the read one skipped.
        return self._tracker_after + (step - self._read_step - 1) + 1 == growth_interval
