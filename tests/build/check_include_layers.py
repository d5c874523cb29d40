#!/usr/bin/env python3
"""Every #include in engine/, profiler/, ui/ and app/ points down the data flow.

Between top folders: app -> ui -> profiler -> engine (engine includes none of the
others; profiler no Qt and no ui/app; ui no app). Inside profiler/, the layers,
lowest first (a file may include its own folder and any lower layer):

  0  profiler/*.h,*.cpp   plain values and vocabularies (records, float formats,
                          number_text, session_meta_keys, capture option specs)
  1  cupti/               the CUPTI seam and record processing
  1  cuda/                ampscope's own CUDA kernels (plain C++ types at the seam)
  2  analysis/            op families and classification, aggregation, comparisons,
                          readiness, the ProfileSnapshot carrier
  3  store/               SessionWriter/Reader, SessionView (the one loader)
  4  capture/, export/    the live profiler (writes through store/); exporters
  5  compare/, report/    comparison runner; HTML report (uses export/'s JSON)

Usage: check_include_layers.py SOURCE_ROOT. Prints each upward include and exits 1
when there is one, 0 otherwise.
"""
import pathlib
import re
import sys

TOP_ORDER = {"engine": 0, "profiler": 1, "ui": 2, "app": 3}
PROFILER_LAYERS = {
    "": 0,
    "cupti": 1,
    "cuda": 1,
    "analysis": 2,
    "store": 3,
    "capture": 4,
    "export": 4,
    "compare": 5,
    "report": 5,
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def profiler_layer(relative):
    """(folder, layer) of a path under profiler/ ('' for the top files)."""
    parts = relative.parts[1:]
    folder = parts[0] if len(parts) > 1 else ""
    if folder not in PROFILER_LAYERS:
        raise SystemExit(f"check_include_layers.py: {relative}: profiler/{folder}/ has no layer; add it to PROFILER_LAYERS")
    return folder, PROFILER_LAYERS[folder]


def violations(root):
    found = []
    for top in TOP_ORDER:
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in (".h", ".cpp") or not path.is_file():
                continue
            relative = path.relative_to(root)
            for target in INCLUDE.findall(path.read_text(errors="replace")):
                target_top = target.split("/", 1)[0]
                if target_top not in TOP_ORDER:
                    continue  # a system or generated header
                if TOP_ORDER[target_top] > TOP_ORDER[top]:
                    found.append(f"{relative}: includes {target} ({target_top}/ is above {top}/)")
                elif top == target_top == "profiler":
                    folder, layer = profiler_layer(relative)
                    target_folder, target_layer = profiler_layer(pathlib.PurePath(target))
                    if target_folder != folder and target_layer >= layer:
                        found.append(f"{relative}: includes {target} (profiler/{target_folder or '*.h'} is not below "
                                     f"profiler/{folder or '*.h'})")
    return found


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    found = violations(pathlib.Path(sys.argv[1]))
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) against the data flow (docs/architecture.md)")
        return 1
    print("every include points down the data flow")
    return 0


if __name__ == "__main__":
    sys.exit(main())
