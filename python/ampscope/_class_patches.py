"""Methods wrapped on a class and on every subclass that defines its own, while a capture runs.

A script's scheduler or GradScaler may be a subclass that overrides the very method the
capture reads: ReduceLROnPlateau defines its own step(), and FSDP's ShardedGradScaler its own
scale(), unscale_() and update() (they all-reduce the inf checks across the ranks). Wrapping
the base class alone misses their calls. So each subclass defined before the capture started
is wrapped where it defines the method, and each one defined while it runs (the script
importing FSDP after `ampscope run` started it) through the base's __init_subclass__.
"""
from __future__ import annotations

import functools
import threading


def subclasses(root):
    """`root` and every class derived from it, each once."""
    seen, stack = [], [root]
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.append(cls)
        stack.extend(cls.__subclasses__())
    return seen


_running = threading.local()  # (object, method name) of the outermost wrapped calls on this thread


def _outermost(name, original, wrapped):
    """`wrapped` for the outermost call of `name` on an object; an override calling
    super().name() runs the base's method as it is, so the call is seen once."""
    @functools.wraps(original)
    def call(self, *args, **kwargs):
        running = _running.__dict__.setdefault("calls", set())
        key = (id(self), name)
        if key in running:
            return original(self, *args, **kwargs)
        running.add(key)
        try:
            return wrapped(self, *args, **kwargs)
        finally:
            running.discard(key)
    return call


class ClassPatches:
    """`wrappers` (method name -> make(original) -> wrapped) on `root`, on its subclasses
    and on the `extra` classes, for as long as installed. `outermost`: a call made inside
    another wrapped call of the same name on the same object is not wrapped again."""

    def __init__(self, root, wrappers, extra=(), outermost=False):
        self._root = root
        self._wrappers = wrappers
        self._extra = extra
        self._outermost = outermost
        self._originals = []  # (class, name, what it had)
        self._hooked = False  # whether __init_subclass__ is ours

    def install(self):
        if self._originals or self._hooked:
            return
        classes = subclasses(self._root)
        classes += [cls for cls in self._extra if cls not in classes]
        for cls in classes:
            self._patch(cls)
        if "__init_subclass__" not in self._root.__dict__:
            root, patch = self._root, self._patch

            def init_subclass(cls, **kwargs):
                super(root, cls).__init_subclass__(**kwargs)
                patch(cls)  # a class defined while capturing, with methods of its own

            root.__init_subclass__ = classmethod(init_subclass)
            self._hooked = True

    def _patch(self, cls):
        for name, make in self._wrappers.items():
            original = cls.__dict__.get(name)
            if original is None or hasattr(original, "_ampscope_original"):
                continue
            wrapped = make(original)
            if self._outermost:
                wrapped = _outermost(name, original, wrapped)
            wrapped._ampscope_original = original
            self._originals.append((cls, name, original))
            setattr(cls, name, wrapped)

    def uninstall(self):
        for cls, name, original in reversed(self._originals):
            setattr(cls, name, original)
        self._originals = []
        if self._hooked and "__init_subclass__" in self._root.__dict__:
            del self._root.__init_subclass__
        self._hooked = False
