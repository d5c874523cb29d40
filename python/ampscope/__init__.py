"""ampscope for PyTorch training scripts: what mixed precision did, op by op, in a
.ampscope session that `ampscope summary`, `export`, `report` and ampscope-ui read.

    import ampscope
    with ampscope.capture("run.ampscope"):
        for x, y in loader:               # the training loop, unchanged
            ...

or, for a script as it is:  ampscope run --out run.ampscope train.py ARGS...
(also: python -m ampscope run ...).
"""
import sys

import torch

try:
    from ._build_info import TORCH_VERSION as _BUILT_FOR
except ImportError:  # the source tree, not a build: python/ampscope has no compiled module
    raise ImportError("ampscope's compiled module is not built here: build the project (scripts/dev.sh build) "
                      "and put build/default/python on PYTHONPATH, or pip install it (see README)") from None

# The extension links the libtorch that `import torch` loaded; its C++ ABI must match,
# so any other torch is refused here, before the module is loaded.
if torch.__version__ != _BUILT_FOR:
    _mismatch = (f"ampscope was built for torch {_BUILT_FOR} but this Python has torch {torch.__version__} "
                 f"({torch.__file__}); rebuild ampscope against this torch (pip install it into this "
                 f"environment, see README) or use the environment it was built for")
    if sys.argv[:1] == ["-m"]:  # `python -m ampscope run ...` (and `ampscope run`): one line
        print(f"ampscope: error: {_mismatch}", file=sys.stderr)
        raise SystemExit(1)
    raise ImportError(_mismatch)

from ._capture import Capture, CaptureError, MaxStepsReached, capture, step, watch  # noqa: E402

__all__ = ["Capture", "CaptureError", "MaxStepsReached", "capture", "step", "watch"]
