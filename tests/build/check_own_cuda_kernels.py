"""Fails when the Python module and the programs run different sets of ampscope's own
CUDA kernels, or a build that found a CUDA compiler lacks one.

Each kernel's launcher is compiled twice, for the programs and for the Python module
(python/CMakeLists.txt), with a definition that only the directory setting it sees.
The module once lacked it for the readiness sums: on an H200, `python -m ampscope run`
then summed readiness with hundreds of ATen launches a sample while `ampscope profile`
used the kernel, and no test on a CPU could tell. Both say which kernels they have:
`ampscope --version` ("own CUDA kernels: ...") and the module's own_cuda_kernels().

usage: check_own_cuda_kernels.py AMPSCOPE_CLI MODULE_DIR ON|OFF   (whether CMake built them)
"""
import subprocess
import sys

EXPECTED = ["range statistics", "readiness sums"]


def cli_kernels(cli):
    out = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True).stdout
    line = next((l for l in out.splitlines() if l.startswith("own CUDA kernels: ")), None)
    if line is None:
        sys.exit(f"FAIL: `{cli} --version` names no own CUDA kernels:\n{out}")
    listed = line.split(": ", 1)[1]
    return [] if listed.startswith("none") else listed.split(", ")


def module_kernels(module_dir):
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import torch; "
            "from ampscope import _ampscope_capture as m; print('\\n'.join(m.own_cuda_kernels()))")
    out = subprocess.run([sys.executable, "-c", code, module_dir], capture_output=True, text=True, check=True).stdout
    return [l for l in out.splitlines() if l]


def main():
    cli, module_dir, built = sys.argv[1], sys.argv[2], sys.argv[3].upper() in ("ON", "1", "TRUE")
    programs, module = cli_kernels(cli), module_kernels(module_dir)
    print(f"programs: {programs or 'none'}; Python module: {module or 'none'}; CMake built them: {built}")
    if programs != module:
        sys.exit("FAIL: the Python module and the programs run different kernels on a GPU")
    if programs != (EXPECTED if built else []):
        sys.exit(f"FAIL: expected {EXPECTED if built else 'none'}")
    print("ok")


if __name__ == "__main__":
    main()
