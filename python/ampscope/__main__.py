"""python -m ampscope run [--out FILE] [profile flags] [-m] SCRIPT [ARGS...]

Runs SCRIPT unmodified (as `python SCRIPT ARGS...` would, with sys.argv set; with -m, the
module SCRIPT as `python -m SCRIPT ARGS...` would) under ampscope.capture and exits with
the script's exit code. Errors before the script starts are one line and exit 2; a script
that raises still closes the session.
"""
import argparse
import importlib.util
import os
import re
import runpy
import sys
import traceback

# `python -m ampscope` has imported the package (and torch) already: the native module is loaded.
from ._ampscope_capture import CAPTURE_OPTIONS  # (key, flag, default, minimum, help), declared once in C++


def _say(line: str) -> None:
    """One line on stderr in one write: torchrun's ranks share the terminal (or the GUI's pipe),
    and print's separate writes of text and newline, unbuffered, interleave their lines."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _error(message: str) -> None:
    _say(f"ampscope: error: {message}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ampscope", description="Capture a PyTorch training script's "
                                     "mixed-precision behaviour into an .ampscope session")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a Python script under capture",
                              usage="ampscope run [--out FILE] [--force] [profile flags] [-m] SCRIPT [ARGS...]")
    run.add_argument("--out", "-o", default="run.ampscope", help="the session file (default: run.ampscope; "
                     "FILE.rank<R>.ampscope per rank under torchrun)")
    run.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    for key, flag, default, _minimum, text in CAPTURE_OPTIONS:
        run.add_argument(flag, dest=key, type=int, default=default, help=text[0].lower() + text[1:])
    run.add_argument("--no-gpu-trace", action="store_true", help="do not trace CUDA kernels through CUPTI")
    run.add_argument("--precision", choices=["script", "fp32", "tf32", "fp16", "bf16"], default="script",
                     help="run the script's autocast regions in this precision (fp32, tf32: off) "
                     "instead of the one they ask for (default: script, as written)")
    run.add_argument("--max-steps", type=int, default=0,
                     help="stop the script as step N+1 would begin, exit status 0 (default 0: no limit)")
    run.add_argument("-m", dest="module", action="store_true",
                     help="SCRIPT is a module, run as `python -m SCRIPT` runs it (a package's train module)")
    run.add_argument("script", help="the Python script to run")
    run.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return parser


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message"), as Python itself does
    return 1


def _module_path(name: str):
    """The file `python -m name` would run, or None; a package runs its __main__."""
    try:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations is not None:
            spec = importlib.util.find_spec(name + ".__main__")
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.origin not in (None, "built-in", "frozen") else None


def run(options) -> int:
    script = options.script
    if options.module:
        sys.path.insert(0, os.getcwd())  # where `python -m` looks first
        path = _module_path(script)
        if path is None:
            _error(f"no module named '{script}' (-m runs a module on sys.path, as python -m does)")
            return 2
    elif not os.path.isfile(script):
        if re.fullmatch(r"python[0-9.]*", os.path.basename(script)):
            _error(f"'{script}' is a Python, not a script: ampscope run [flags] SCRIPT [ARGS...] runs SCRIPT "
                   f"with {sys.executable} (set AMPSCOPE_PYTHON to choose another)")
        else:
            _error(f"script '{script}' not found")
        return 2
    for key, flag, _default, least, _text in CAPTURE_OPTIONS:
        if getattr(options, key) < least:
            _error(f"{flag} must be >= {least}")
            return 2
    if options.max_steps < 0:
        _error("--max-steps must be >= 0")
        return 2
    try:
        import ampscope
    except ImportError as e:
        _error(str(e))
        return 1
    capture = ampscope.Capture(options.out, **{key: getattr(options, key) for key, *_ in CAPTURE_OPTIONS},
                               trace_gpu=not options.no_gpu_trace, overwrite=options.force,
                               precision=None if options.precision == "script" else options.precision,
                               max_steps=options.max_steps,
                               description=f"python -m {script}" if options.module
                               else f"python {os.path.basename(script)}")
    if os.path.exists(capture.path) and not options.force:
        _error(f"--out '{capture.path}' exists; add --force to overwrite it")
        return 2
    args = list(options.args)
    # What runs it again as it ran now (the GUI's "Run again"): the Python, where, what, with what.
    capture._command = {"python": sys.executable, "working_directory": os.getcwd(), "module": options.module,
                        "script": script, "arguments": args}
    world = int(os.environ.get("WORLD_SIZE", "1") or "1")
    if world > 1:  # a rank of torchrun's: its processes in all and on each node, to start as many again
        local = int(os.environ.get("LOCAL_WORLD_SIZE", str(world)) or str(world))
        capture._command["ranks"] = {"world_size": world, "local_world_size": local,
                                     "rank": int(os.environ.get("RANK", "0") or "0")}
    if options.module:
        sys.argv = [path] + args  # as python -m sets it
    else:
        sys.argv = [script] + args
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        capture.start()
    except ampscope.CaptureError as e:
        _error(str(e))
        return 2
    code, state, message, failure = 0, "finished", "", None
    try:
        if options.module:
            runpy.run_module(script, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(script, run_name="__main__")
    except ampscope.MaxStepsReached:
        message = f"stopped after {options.max_steps} steps (--max-steps)"
    except SystemExit as e:
        code = _exit_code(e.code)
        if code != 0:
            state, message = "failed", f"the script exited with status {code}"
    except KeyboardInterrupt:
        code, state, message = 130, "stopped", "interrupted (Ctrl-C)"
    except BaseException as e:  # the script raised: say so, keep the session
        code, state = 1, "failed"
        message = f"{type(e).__name__}: {e}".splitlines()[0] if str(e) else type(e).__name__
        if isinstance(e, ampscope.CaptureError):
            _error(str(e))
        else:
            traceback.print_exc()
        failure = message
    finally:
        capture.stop(state, message)
    if failure is not None:
        _say(f"ampscope: the script raised {failure}; session {capture.path} closed with {capture.steps} steps")
    else:
        tracing = capture.gpu_tracing
        note = f"; GPU tracing {tracing}" if tracing and tracing != "cupti" else ""
        _say(f"ampscope: session {capture.path}: {capture.steps} steps ({state}){note}")
    return code


def _script_args(argv, options):
    """The script's arguments as given: argparse drops a "--" among them, which the script
    would have seen in sys.argv (`python train.py -- extra`)."""
    for i, token in enumerate(argv):
        if token != options.script:
            continue
        tail = argv[i + 1:]
        if "--" in tail:
            without = list(tail)
            without.remove("--")
            if without == options.args:
                return tail
        if tail == options.args:
            return tail
    return options.args


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    options = _parser().parse_args(argv)
    if options.command == "run":
        options.args = _script_args(argv, options)
        return run(options)
    return 2


if __name__ == "__main__":
    sys.exit(main())
