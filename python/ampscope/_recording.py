"""The capture's own tensor reads stay out of the script's recorded ops."""
from __future__ import annotations

import torch

from . import _ampscope_capture as _core


class Quiet:
    """RecordFunction off for this thread while the wrapper reads tensors (.item(), checks)."""

    def __enter__(self):
        self._previous = _core.set_recording_enabled(False)

    def __exit__(self, *exc):
        _core.set_recording_enabled(self._previous)


def scalar(value) -> float:
    if isinstance(value, torch.Tensor):
        return float(value.detach().float().item())
    return float(value)
