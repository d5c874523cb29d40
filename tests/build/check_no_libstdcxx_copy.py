"""Fails when a program or module holds its own copy of libstdc++'s code.

LibTorch runs on the process's shared libstdc++.so.6. A program or Python module
that links libstdc++.a (as -lstdc++ does where the compiler's own directory holds
the archive alone: the GPU machine's g++ in /opt/gcc) carries a second copy with
its own statics: std::locale's facet ids, for one. The Python module built there
indexed the process's locale with its own ids, and std::regex called a codecvt
facet as if it were ctype: SIGSEGV in TensorCoreRules::parse on every
`python -m ampscope run` (issue 26). cmake/AmpscopeDependencies.cmake names the
shared libstdc++ by its path so that no archive member is ever pulled.

A copy shows as functions that libstdc++.so defines itself (nm type T: locale
initialisation, steady_clock::now, ...) defined again in the file. Template and
inline code (type W, instantiated wherever it is used) and data (an executable's
copy relocations of std::cout and the like) do not count.

usage: check_no_libstdcxx_copy.py FILE...    exit 1 when one holds a copy
"""
import subprocess
import sys


def libstdcxx_path(path):
    ldd = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    return next((line.split("=>")[1].split()[0] for line in ldd.splitlines()
                 if "libstdc++.so" in line and "=>" in line), None)


def functions(path, dynamic, types):
    args = ["nm", "--defined-only"] + (["-D"] if dynamic else []) + [path]
    out = subprocess.run(args, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in types:
            names.add(parts[2].split("@")[0])
    return names


def main():
    status = 0
    for path in sys.argv[1:]:
        shared = libstdcxx_path(path)
        if not shared:
            # Nothing loads libstdc++.so: the whole copy is inside, which is the bug too
            # (a fully static program would also land here, and ampscope builds none).
            print(f"FAIL {path}: needs no shared libstdc++ (ldd), so it carries its own")
            status = 1
            continue
        own = functions(shared, True, {"T"})
        inside = functions(path, False, {"T", "t"}) or functions(path, True, {"T"})
        copied = sorted(own & inside)
        if copied:
            print(f"FAIL {path}: {len(copied)} of libstdc++'s own functions are linked into it "
                  f"(a static libstdc++ beside {shared}), e.g. {', '.join(copied[:3])}")
            status = 1
        else:
            print(f"ok   {path}: none of libstdc++'s {len(own)} own functions inside; it uses {shared}")
    return status


if __name__ == "__main__":
    sys.exit(main())
