#!/usr/bin/env python3
"""The layers of docs/architecture.md, enforced (issue #48).

docs/architecture.md's table "The layers" gives every library of src/ a floor. A library may
link and include only libraries on its floor or below. This reads the floors from that table,
the libraries and their sources from src/**/CMakeLists.txt, and then checks
  - every hamisim_* library a target_link_libraries names (PUBLIC, PRIVATE or INTERFACE), and
  - every #include "dir/file.h" of every source and header under src/,
and prints each one that reaches upwards, with file and line. It also fails when a library has
no floor in the table, or the table names a library that does not exist, so the document
cannot drift from the tree.

    scripts/check-layers.py [ROOT]      exit 0: the layers hold; 1: what breaks them is printed
    scripts/check-layers.py --self-test  plants an upward link and an upward include in a copy
                                         of the tree and checks that both are reported
"""
import fnmatch
import os
import re
import shutil
import sys
import tempfile

ROW = re.compile(r"^\|\s*(\d+)\s*\|(.*?)\|")
NAME = re.compile(r"`(hamisim_[A-Za-z0-9_<>*]+)`")
ADD_LIBRARY = re.compile(r"add_library\(\s*(hamisim_\w+)([^)]*)\)", re.S)
LINK = re.compile(r"target_link_libraries\(\s*(hamisim_\w+|hamisim)\b([^)]*)\)", re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def floors_from_doc(root):
    """{library name or glob: floor} from the table under '## The layers'."""
    floors, in_table = {}, False
    with open(os.path.join(root, "docs/architecture.md"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                in_table = line.strip() == "## The layers"
                continue
            m = ROW.match(line) if in_table else None
            if not m:
                continue
            for name in NAME.findall(m.group(2)):
                floors[name.replace("<vendor>", "*")] = int(m.group(1))
    return floors


def libraries(root):
    """{library: (directory of its CMakeLists.txt, [sources])} and the link lines
    [(target, [hamisim libraries], file, line)]."""
    libs, links = {}, []
    for d, _, files in os.walk(os.path.join(root, "src")):
        if "CMakeLists.txt" not in files:
            continue
        path = os.path.join(d, "CMakeLists.txt")
        text = open(path, encoding="utf-8").read()
        code = re.sub(r"#[^\n]*", "", text)
        rel = os.path.relpath(d, root)
        for m in ADD_LIBRARY.finditer(code):
            sources = [s for s in m.group(2).split() if s.endswith((".cpp", ".cc", ".h"))]
            libs[m.group(1)] = (rel, sources)
        for m in LINK.finditer(code):
            deps = [w for w in m.group(2).split() if w.startswith("hamisim_")]
            line = code[:m.start()].count("\n") + 1
            links.append((m.group(1), deps, os.path.relpath(path, root), line))
    return libs, links


def floor_of(lib, floors):
    if lib in floors:
        return floors[lib]
    for pattern, floor in floors.items():
        if "*" in pattern and fnmatch.fnmatchcase(lib, pattern):
            return floor
    return None


def owners(root, libs, floors):
    """{"dir/stem": library}: a source belongs to the library that compiles it, a header to the
    library compiling the .cpp of the same name, and a header without one to the lowest library
    whose sources in its directory include it (else to its directory's lowest library)."""
    by_stem, by_dir = {}, {}
    for lib, (d, sources) in libs.items():
        rel = d[len("src/"):] if d.startswith("src/") else d
        by_dir.setdefault(rel, []).append(lib)
        for s in sources:
            by_stem[os.path.normpath(os.path.join(rel, os.path.splitext(s)[0]))] = lib
    includers = {}
    for lib, (d, sources) in libs.items():
        files = sources + [os.path.splitext(s)[0] + ".h" for s in sources]
        for s in files:
            path = os.path.join(root, d, s)
            if not os.path.exists(path):
                continue
            for inc in INCLUDE.findall(open(path, encoding="utf-8").read()):
                stem = os.path.normpath(os.path.splitext(inc)[0])
                if stem not in by_stem:
                    includers.setdefault(stem, set()).add(lib)
    lowest = lambda candidates: min(candidates, key=lambda lib: (floor_of(lib, floors) or 0, lib))
    for stem, candidates in includers.items():
        if os.path.dirname(stem) in by_dir:
            local = [lib for lib in candidates if lib in by_dir[os.path.dirname(stem)]]
            by_stem[stem] = lowest(local or by_dir[os.path.dirname(stem)])
    return by_stem, by_dir


def header_owner(include, by_stem, by_dir, floors):
    """The library an #include "dir/file.h" belongs to (owners()), else its directory's lowest
    library, else None (not ours: a third-party or generated header)."""
    stem = os.path.normpath(os.path.splitext(include)[0])
    if stem in by_stem:
        return by_stem[stem]
    known = [lib for lib in by_dir.get(os.path.dirname(stem), []) if floor_of(lib, floors) is not None]
    return min(known, key=lambda lib: floor_of(lib, floors)) if known else None


def check(root):
    floors = floors_from_doc(root)
    libs, links = libraries(root)
    problems = []
    for lib in sorted(libs):
        if floor_of(lib, floors) is None:
            problems.append(f"{libs[lib][0]}/CMakeLists.txt: {lib} has no floor in "
                            "docs/architecture.md's table of layers")
    for name in sorted(floors):
        if not any(fnmatch.fnmatchcase(lib, name) for lib in libs):
            problems.append(f"docs/architecture.md: the table of layers names {name}, "
                            "which no src/**/CMakeLists.txt defines")
    exe_floor = max(floors.values()) + 1  # the binary sits above every library
    for target, deps, path, line in links:
        own = exe_floor if target == "hamisim" else floor_of(target, floors)
        if own is None:
            continue
        for dep in deps:
            f = floor_of(dep, floors)
            if f is not None and f > own:
                problems.append(f"{path}:{line}: {target} (floor {own}) links {dep} (floor {f})")
    by_stem, by_dir = owners(root, libs, floors)
    src = os.path.join(root, "src")
    for d, _, files in sorted(os.walk(src)):
        for name in sorted(files):
            if not name.endswith((".h", ".cpp")):
                continue
            rel = os.path.relpath(os.path.join(d, name), src)
            lib = header_owner(rel, by_stem, by_dir, floors)  # the file's own library
            own = floor_of(lib, floors) if lib else None
            if own is None:
                continue
            text = open(os.path.join(d, name), encoding="utf-8").read()
            for m in INCLUDE.finditer(text):
                target = header_owner(m.group(1), by_stem, by_dir, floors)
                if target is None or target == lib:
                    continue
                f = floor_of(target, floors)
                if f is not None and f > own:
                    line = text[:m.start()].count("\n") + 1
                    problems.append(f"src/{rel}:{line}: {lib} (floor {own}) includes "
                                    f"\"{m.group(1)}\" of {target} (floor {f})")
    return problems


def self_test(root):
    """An upward link and an upward include planted in a copy must both be reported."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "tree")
        shutil.copytree(os.path.join(root, "src"), os.path.join(copy, "src"))
        shutil.copytree(os.path.join(root, "docs"), os.path.join(copy, "docs"))
        if check(copy):
            print("self-test: the tree itself breaks the layers; run without --self-test")
            return 1
        with open(os.path.join(copy, "src/model/CMakeLists.txt"), "a") as f:
            f.write("\ntarget_link_libraries(hamisim_model PRIVATE hamisim_planner_scaleup)\n")
        fit = os.path.join(copy, "src/fit/policy.cpp")
        text = open(fit).read()
        open(fit, "w").write('#include "server/http_server.h"\n' + text)
        problems = check(copy)
        want = ["hamisim_model (floor 1) links hamisim_planner_scaleup",
                'hamisim_fit (floor 3) includes "server/http_server.h" of hamisim_server_core']
        missing = [w for w in want if not any(w in p for p in problems)]
        if missing:
            print("self-test: not reported:\n  " + "\n  ".join(missing))
            return 1
        print(f"self-test: both planted violations reported ({len(problems)} problems)")
        return 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    args = sys.argv[1:]
    if args and args[0] == "--self-test":
        root = args[1] if len(args) > 1 else os.path.dirname(here)
        return self_test(root)
    root = args[0] if args else os.path.dirname(here)
    problems = check(root)
    for p in problems:
        print(p)
    libs, _ = libraries(root)
    print(f"layers: {len(libs)} libraries, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
