"""Precision readiness for GEMMs a module runs on its own parameters through F.linear
without calling a Linear: nn.MultiheadAttention's in-projection (in_proj_weight, or
q/k/v_proj_weight) and its out-projection (out_proj is a Linear whose forward never
runs: multi_head_attention_forward multiplies by out_proj.weight itself).

multi_head_attention_forward calls torch.nn.functional.linear by its global name, so on
readiness steps, while such a module's forward runs on this thread, that name is a
wrapper that hands each call's input and weight to the capture and calls the original.
Other threads and other steps call the original: the wrapper is installed only around
those forwards (a count, so that threads overlapping keep it) and passes through where
its thread is not inside one. A torch function mode cannot do this: a mode is off inside
its own handler, so it never sees the linears inside multi_head_attention_forward."""
from __future__ import annotations

import threading

import torch.nn.functional as F


class FunctionalProjections:
    def __init__(self, on_linear):
        self._on_linear = on_linear  # on_linear(input, weight): a GEMM's operands, as F.linear got them
        self._tls = threading.local()
        self._lock = threading.Lock()
        self._users = 0
        # Some thread is inside such a forward: a plain attribute, as module hooks read it on every call.
        self.active = False
        self._original = F.linear
        self._wrapper = self._linear  # one bound method: F.linear is compared with it

    def release(self) -> None:
        """The capture ends: F.linear is the original again, whatever was left begun."""
        with self._lock:
            if F.linear is self._wrapper:
                F.linear = self._original
            self._users = 0
            self.active = False

    def begin(self, module) -> None:
        """`module`'s forward begins on this thread: its F.linear calls are seen until end()."""
        with self._lock:
            if self._users == 0:
                self._original = F.linear
                F.linear = self._wrapper
            self._users += 1
            self.active = True
        self._tls.module = module

    def end(self, module) -> None:
        """A module's forward returned (or raised): where it was begin()'s, stop seeing."""
        if getattr(self._tls, "module", None) is not module:
            return
        self._tls.module = None
        with self._lock:
            self._users -= 1
            if self._users == 0:
                self.active = False
                if F.linear is self._wrapper:  # unless the script replaced it meanwhile
                    F.linear = self._original

    # A thread that read F.linear just before end() restored it still calls this: the
    # original stays set.
    def _linear(self, input, weight, *args, **kwargs):
        if getattr(self._tls, "module", None) is not None:
            self._on_linear(input, weight)
        return self._original(input, weight, *args, **kwargs)
