#!/usr/bin/env python3
"""Every C++ file that names a fixed-width integer type (uint32_t, std::int64_t, ...) reaches
<cstdint> through its own includes: directly, through a project header that does, or through a
third-party header (LibTorch, Qt, CUDA, ...) that brings it.

g++ 12's <string>, <vector> and <memory> include <cstdint> on the way; g++ 13's do not (GCC 13
porting notes, "Header dependency changes"). A header that relied on that builds on Debian 12
(CI, this machine) and fails on Ubuntu 24.04, where users train: session 44's GPU loan lost a
build to profiler/report/svg_chart.h. CI's compiler cannot see it, so this check reads the
includes instead.

Usage: check_cstdint_includes.py SOURCE_ROOT. Prints each file that does not reach <cstdint>
and exits 1 when there is one.
"""
import pathlib
import re
import sys

FOLDERS = ("engine", "profiler", "ui", "app", "tests", "bench", "python")
SUFFIXES = (".h", ".hpp", ".cpp", ".cu", ".cuh")
FIXED_WIDTH = re.compile(r"\b(?:std::)?u?int(?:8|16|32|64)_t\b")
QUOTED = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ANGLED = re.compile(r"^\s*#\s*include\s+<([^>]+)>", re.M)
PROVIDES = re.compile(r"^(cstdint|stdint\.h|cinttypes|inttypes\.h)$")
# Third-party headers, each of which includes <cstdint> or <stdint.h> itself.
THIRD_PARTY = re.compile(r"^(torch|ATen|c10|Q[A-Za-z]|cupti|cuda|nlohmann|gtest|gmock|CLI|pybind11|nanobind|google|"
                         r"sqlite3\.h|qcustomplot\.h|benchmark)")
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def resolve(root, including, target):
    for base in (root, including.parent):
        candidate = base / target
        if candidate.is_file():
            return candidate
    return None  # generated (protobuf) or a system header in quotes: not ours to judge


def reaches_cstdint(root, path, memo, visiting=frozenset()):
    if path in memo:
        return memo[path]
    if path in visiting:
        return False
    text = path.read_text(errors="replace")
    found = any(PROVIDES.match(h) or THIRD_PARTY.match(h) for h in ANGLED.findall(text))
    for target in QUOTED.findall(text):
        if found:
            break
        header = resolve(root, path, target)
        found = header is None or reaches_cstdint(root, header, memo, visiting | {path})
    memo[path] = found
    return found


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    memo, missing = {}, []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file() or "_fixture" in str(path.relative_to(root)):
                continue
            if FIXED_WIDTH.search(COMMENT.sub("", path.read_text(errors="replace"))) and \
                    not reaches_cstdint(root, path, memo):
                missing.append(path.relative_to(root))
    for relative in missing:
        print(f"{relative}: names a fixed-width integer type but reaches no <cstdint> (g++ 13 fails there)")
    print(f"{len(missing)} file(s) without <cstdint>" if missing else "every file that names uint*_t reaches <cstdint>")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
