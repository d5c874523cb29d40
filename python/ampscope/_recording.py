"""The capture's own tensor reads stay out of the script's recorded ops."""
from __future__ import annotations

import torch

from . import _ampscope_capture as _core


# The phase scopes the capture opens, by phase name (the session's, records.h): interned once.
PHASE_SCOPES = {name: _core.intern_scope("ampscope.phase:" + name)
                for name in ("forward", "forward_no_grad", "backward", "optimizer", "recompute")}


class Quiet:
    """RecordFunction off for this thread while the wrapper reads tensors (.item(), checks)."""

    def __enter__(self):
        self._previous = _core.set_recording_enabled(False)

    def __exit__(self, *exc):
        _core.set_recording_enabled(self._previous)


class OwnWait:
    """The capture's deliberate waits for the device (a checked step's gradient tests, a
    sample's read-back): PyTorch's sync checker (torch.cuda.set_sync_debug_mode) is the
    script's, for the script's own waits, so it is off for these. A wait anywhere else
    still trips it (tests/python_capture/test_python_capture_gpu.cpp relies on that)."""

    def __enter__(self):
        self._mode = torch.cuda.get_sync_debug_mode() if torch.cuda.is_initialized() else 0
        if self._mode:
            torch.cuda.set_sync_debug_mode(0)

    def __exit__(self, *exc):
        if self._mode:
            torch.cuda.set_sync_debug_mode(self._mode)


def scalar(value) -> float:
    if isinstance(value, torch.Tensor):
        return float(value.detach().float().item())
    return float(value)
