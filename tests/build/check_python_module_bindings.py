"""Fails when ampscope's Python module binds a C++ standard library symbol into LibTorch.

The torch wheel's libtorch.so and libtorch_cpu.so export their own unversioned
copy of parts of libstdc++ (std::filesystem, locale facets, ...), linked in from
a static libstdc++ when the wheel was built. A reference in the module is bound
to the first library that defines the symbol: first in the process's global
scope, then in the module's own dependencies, breadth-first, in DT_NEEDED order.
On the GPU machine (Ubuntu 24.04, g++ 13, CMake 4) the module needed LibTorch
before libstdc++, and `python -m ampscope run` died in std::regex's compiler on
a codecvt facet bound into libtorch_cpu.so. The build now puts libstdc++ first
(cmake/AmpscopeDependencies.cmake, ampscope_libstdcxx_first); this checks the
bindings the dynamic linker actually makes, all of them at load (LD_BIND_NOW):

  after-import-torch  the module imported as a user's script does, after `import torch`;
  module-first        the module loaded before torch, so that only its own dependency
                      order decides, as on a machine where `import torch` put no libstdc++
                      into the global scope (on Debian torch's CUDA preload does, which
                      hides a wrong order: the first scenario alone cannot fail here);
  control             module-first with a copy of the module whose libstdc++ entry is
                      removed (libstdc++ then comes only through LibTorch's dependencies,
                      after LibTorch, as a LibTorch-first link gives): must show bindings
                      into LibTorch, or the check could not see the bug.

usage: check_python_module_bindings.py MODULE.so PATCHELF
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

BINDING = re.compile(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: normal symbol `([^']+)'")
LIBTORCH = re.compile(r"/(libtorch[^/]*|libc10[^/]*)\.so[^/]*$")


def libstdcxx_symbols(module):
    """The dynamic symbols libstdc++ itself defines (only those count: inline ones,
    instantiated in every library that uses them, bind anywhere harmlessly)."""
    ldd = subprocess.run(["ldd", module], capture_output=True, text=True, check=True).stdout
    path = next((line.split("=>")[1].split()[0] for line in ldd.splitlines()
                 if "libstdc++.so" in line and "=>" in line), None)
    if not path:
        sys.exit(f"FAIL: ldd finds no libstdc++ for {module}")
    nm = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1].split("@")[0] for line in nm.splitlines() if line.strip()}


def bindings_into_libtorch(module, import_torch_first, own):
    """(standard library symbols of the module bound into LibTorch, all bindings of the module)."""
    folder, name = os.path.split(module)
    modname = name.split(".")[0]
    code = ("import torch\n" if import_torch_first else "") + (
        "import importlib.machinery, importlib.util\n"
        f"spec = importlib.util.spec_from_file_location({modname!r}, {module!r})\n"
        # The binding trace is complete once dlopen returns (LD_BIND_NOW); the module's
        # init may still fail in a copy outside its package, which does not matter here.
        "try:\n    importlib.util.module_from_spec(spec)\nexcept Exception as e:\n    print('init:', e)\n")
    with tempfile.TemporaryDirectory() as trace_dir:
        env = dict(os.environ, LD_BIND_NOW="1", LD_DEBUG="bindings",
                   LD_DEBUG_OUTPUT=os.path.join(trace_dir, "trace"))
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=240)
        if run.returncode != 0:
            sys.exit(f"FAIL: loading {module} exited {run.returncode}: {run.stderr.strip()[-400:]}")
        bad, total = set(), 0
        for trace in os.listdir(trace_dir):
            with open(os.path.join(trace_dir, trace), errors="replace") as f:
                for line in f:
                    m = BINDING.search(line)
                    if not m or os.path.basename(m.group(1)) != name:
                        continue
                    total += 1
                    if m.group(3) in own and LIBTORCH.search(m.group(2)):
                        bad.add(f"{m.group(3)} -> {os.path.basename(m.group(2))}")
    return bad, total


def main():
    module, patchelf = sys.argv[1], sys.argv[2]
    own = libstdcxx_symbols(module)
    status = 0
    for scenario, first in (("after-import-torch", True), ("module-first", False)):
        bad, total = bindings_into_libtorch(module, first, own)
        if total == 0:
            print(f"FAIL {scenario}: no binding of the module in the trace: the check saw nothing")
            status = 1
        elif bad:
            print(f"FAIL {scenario}: {len(bad)} C++ standard library symbols bound into LibTorch, e.g.")
            for line in sorted(bad)[:5]:
                print("   ", line)
            status = 1
        else:
            print(f"ok   {scenario}: {total} bindings, no C++ standard library symbol bound into LibTorch")
    with tempfile.TemporaryDirectory() as scratch:
        control = os.path.join(scratch, os.path.basename(module))
        shutil.copy2(module, control)
        subprocess.run([patchelf, "--remove-needed", "libstdc++.so.6", control], check=True)
        bad, total = bindings_into_libtorch(control, False, own)
        if bad:
            print(f"ok   control: a module that reaches libstdc++ only after LibTorch binds {len(bad)} "
                  "standard library symbols into LibTorch, and the check sees it")
        else:
            print(f"FAIL control: the LibTorch-first copy shows no binding into LibTorch ({total} bindings): "
                  "the check cannot see the bug here")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
