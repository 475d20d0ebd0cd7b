"""The Python packages that travel to the lent GPU machine, which reaches no package index
(docs/gpu.md, "On a lent GPU machine"): which ones, how they are packed here, and how they
are put together and checked there. Standard library only (``build`` excepted, which runs
here): the machine runs it before anything is installed.

* here, ``bench/gpu_wheels.sh``: ``python -m bench.gpu_carry pins`` (what to download),
  then ``python -m bench.gpu_carry build DOWNLOADED .gpu-wheels``;
* there, run 1: ``python3 -m bench.gpu_carry stash .gpu-wheels/run1 STASH``;
* there, run 2: ``python3 -m bench.gpu_carry join WHEELS STASH .gpu-wheels/run2``.

Packing: every wheel is rewritten with its members LZMA-compressed (a wheel is a zip file
and pip reads it with Python's ``zipfile``, which decompresses LZMA members: the same
files and RECORD, a third smaller); xgboost's (132 MB, 97 MB so) is cut into parts of at
most ``MAX_PART`` bytes. Run ``i`` carries part ``i``; the last run also carries every
other wheel, so that a second run that finds the first one's files gone (a machine no
longer warm) still has all but xgboost. Every wheel and part has its SHA-256 and size in
``manifest.json``, which each run carries: ``stash`` checks the parts that a run brought
and keeps them outside the checkout; ``join`` checks each part, concatenates, checks the
whole wheel and leaves out, saying so, a wheel with a part missing or wrong.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

CARRY_LIMIT = 64 * 2**20  # bytes one run may carry, the working tree included
MAX_PART = 55_000_000
# what the larger run folder held when built (2026-12-07: run 2, 55,159,775 bytes; run 1
# 55,006,992): the working tree may grow to CARRY_LIMIT less this
RUN_FOLDER_BYTES = 55_200_000
MANIFEST = "manifest.json"
# what the image lacks (bench/gpu_image_packages.txt), at the versions the dev extra uses
CARRIED = {"dask": "2026.7.1", "distributed": "2026.7.1", "dask-cuda": "26.10.0",
           "partd": "1.4.2", "locket": "1.0.0", "tblib": "3.2.2", "tornado": "6.6.1",
           "zict": "3.0.0", "lightgbm": "4.7.0", "tbb": "2023.2.0", "tcmlib": "1.6.0",
           "xgboost": "3.2.0"}
SPLIT = ("xgboost",)  # too large for one run: carried in parts
# requirements of carried wheels that neither the image nor the wheels satisfy, and why
# none is needed there
UNNEEDED = {
    "nvidia-nccl-cu12": "xgboost opens NCCL only to train on several GPUs; one GPU here",
    "rapids-dask-dependency": "RAPIDS' pins of dask (and bokeh); dask-cuda does not import it",
}
# the target's interpreter, for the requirements' environment markers
TARGET = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux",
          "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
          "implementation_name": "cpython", "platform_python_implementation": "CPython"}
IMAGE_LIST = Path(__file__).resolve().with_name("gpu_image_packages.txt")


def normalize(name):
    """A distribution's name as the package index compares names (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def image_packages(path=None):
    """The distributions the machine's image holds (names, normalised)."""
    lines = Path(path or IMAGE_LIST).read_text(encoding="utf-8").splitlines()
    return {normalize(line.split()[0]) for line in lines if line.strip() and line[0] != "#"}


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _entry(path):
    return {"file": Path(path).name, "sha256": sha256(path), "size": Path(path).stat().st_size}


def wheel_metadata(path):
    """(name, version, [Requires-Dist lines]) of a wheel."""
    with zipfile.ZipFile(path) as wheel:
        name = next(n for n in wheel.namelist()
                    if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
        text = wheel.read(name).decode("utf-8")
    fields = [line.split(":", 1) for line in text.split("\n\n", 1)[0].splitlines() if ":" in line]
    get = lambda key: [v.strip() for k, v in fields if k == key]  # noqa: E731
    return normalize(get("Name")[0]), get("Version")[0], get("Requires-Dist")


def missing_requirements(requires, available, environment=TARGET):
    """The requirements (names) that apply on the target and that ``available`` lacks."""
    from packaging.requirements import Requirement

    missing = []
    for line in requires:
        requirement = Requirement(line)
        marker = requirement.marker
        if marker is not None and not marker.evaluate(dict(environment, extra="")):
            continue
        if normalize(requirement.name) not in available:
            missing.append(normalize(requirement.name))
    return missing


def repack_lzma(source, target):
    """``source``'s members, in order, LZMA-compressed into the wheel ``target``."""
    with zipfile.ZipFile(source) as old, \
            zipfile.ZipFile(target, "w", compression=zipfile.ZIP_LZMA) as new:
        for info in old.infolist():
            member = zipfile.ZipInfo(info.filename, info.date_time)
            member.external_attr, member.compress_type = info.external_attr, zipfile.ZIP_LZMA
            new.writestr(member, old.read(info))
    return Path(target)


def split_file(path, max_part, folders):
    """``path`` cut into parts of at most ``max_part`` bytes, part ``i`` written to
    ``folders[i]`` as ``NAME.part{i+1}``; the parts' paths."""
    size = Path(path).stat().st_size
    n_parts = max(1, -(-size // max_part))
    if n_parts > len(folders):
        raise ValueError(f"{Path(path).name}: {size} bytes need {n_parts} parts of at most "
                         f"{max_part}, but there are {len(folders)} runs to carry them")
    parts = []
    with open(path, "rb") as f:
        for i in range(n_parts):
            part = Path(folders[i]) / f"{Path(path).name}.part{i + 1}"
            part.write_bytes(f.read(max_part))
            parts.append(part)
    return parts


def tree_bytes(root):
    """Bytes of the working tree that travels with every run: tracked files and untracked
    ones that git does not ignore."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=root, capture_output=True, check=True).stdout.split(b"\0")
    return sum(os.path.getsize(os.path.join(root, os.fsdecode(f))) for f in files
               if f and os.path.isfile(os.path.join(root, os.fsdecode(f))))


def _pick_wheels(downloaded):
    """{name: path} of the one wheel per carried distribution at its pinned version."""
    found = {}
    for path in sorted(Path(downloaded).glob("*.whl")):
        name, version, _ = wheel_metadata(path)
        if CARRIED.get(name) == version:
            if name in found:
                raise ValueError(f"two wheels of {name} {version}: {found[name].name}, {path.name}")
            found[name] = path
    missing = sorted(set(CARRIED) - set(found))
    if missing:
        raise ValueError(f"no wheel in {downloaded} for: {', '.join(missing)}")
    return found


def check_requirements(wheels, image):
    """Every requirement of every carried wheel is in the image, carried, or UNNEEDED."""
    available = image | set(CARRIED) | set(UNNEEDED)
    gaps = {name: missing for name, path in wheels.items()
            if (missing := missing_requirements(wheel_metadata(path)[2], available))}
    if gaps:
        raise ValueError(f"requirements neither in the image nor carried: {gaps}")


def build(downloaded, out, tree, n_runs=2, max_part=MAX_PART, limit=CARRY_LIMIT):
    """The run folders ``out/run1`` .. ``out/run{n_runs}`` and their manifest; each run's
    bytes with the tree (``tree`` bytes); raises if a run would carry more than ``limit``."""
    wheels = _pick_wheels(downloaded)
    check_requirements(wheels, image_packages())
    runs = [Path(out) / f"run{i + 1}" for i in range(n_runs)]
    packed = Path(out) / "packed"
    for folder in runs + [packed]:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    manifest = {"wheels": []}
    for name, path in sorted(wheels.items()):
        if name in SPLIT:
            wheel = repack_lzma(path, packed / path.name)
            parts = [_entry(p) for p in split_file(wheel, max_part, runs)]
        else:
            wheel, parts = repack_lzma(path, runs[-1] / path.name), []
        manifest["wheels"].append(dict(_entry(wheel), name=name, parts=parts))
    for folder in runs:
        (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    sizes = [tree + sum(f.stat().st_size for f in folder.iterdir()) for folder in runs]
    over = [f"run {i + 1}: {s} bytes" for i, s in enumerate(sizes) if s > limit]
    if over:
        raise ValueError(f"over the {limit} bytes a run may carry: {', '.join(over)}")
    return manifest, sizes


def _manifest(folders):
    for folder in folders:
        path = Path(folder) / MANIFEST
        if path.is_file():
            return json.loads(path.read_text())
    raise FileNotFoundError(f"no {MANIFEST} in {', '.join(map(str, folders))}")


def _find(entry, folders):
    """(path, problem) of a manifest entry in the first folder that holds it."""
    problem = "missing"
    for folder in folders:
        path = Path(folder) / entry["file"]
        if path.is_file():
            if path.stat().st_size == entry["size"] and sha256(path) == entry["sha256"]:
                return path, None
            problem = f"wrong SHA-256 or size in {folder}"
    return None, problem


def stash(carried, keep):
    """Check the parts in ``carried`` and copy them to ``keep``; the number that failed."""
    manifest, bad = _manifest([carried]), 0
    Path(keep).mkdir(parents=True, exist_ok=True)
    for wheel in manifest["wheels"]:
        for part in wheel["parts"]:
            if not (Path(carried) / part["file"]).exists():
                continue
            path, problem = _find(part, [carried])
            print(f"[carry] {part['file']}: " + (problem or "SHA-256 checked, kept in " + str(keep)))
            if path:
                shutil.copyfile(path, Path(keep) / part["file"])
            bad += problem is not None
    return bad


def join(wheels_dir, folders):
    """The wheels of the manifest, whole and checked, in ``wheels_dir``; the names of
    those that could not be made (a part missing or wrong)."""
    manifest, left_out = _manifest(folders), []
    Path(wheels_dir).mkdir(parents=True, exist_ok=True)
    for wheel in manifest["wheels"]:
        target = Path(wheels_dir) / wheel["file"]
        found = [_find(part, folders) for part in wheel["parts"]] or [_find(wheel, folders)]
        problems = [f"{e['file']} {problem}" for e, (_, problem) in
                    zip(wheel["parts"] or [wheel], found) if problem]
        if not problems:
            with open(target, "wb") as out:
                for path, _ in found:
                    with open(path, "rb") as f:
                        shutil.copyfileobj(f, out, 1 << 22)
            if target.stat().st_size != wheel["size"] or sha256(target) != wheel["sha256"]:
                target.unlink()
                problems = ["the joined parts' SHA-256 is wrong"]
        if problems:
            left_out.append(wheel["name"])
        how = f"joined from {len(wheel['parts'])} parts, " if wheel["parts"] else ""
        print(f"[carry] {wheel['name']}: " + ("left out: " + "; ".join(problems) if problems
                                              else how + "SHA-256 checked"), flush=True)
    return left_out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("pins", help="name==version of each carried distribution, one a line")
    b = sub.add_parser("build", help="here: pack the downloaded wheels into run folders")
    b.add_argument("downloaded")
    b.add_argument("out")
    s = sub.add_parser("stash", help="there: check a run's parts and keep them")
    s.add_argument("carried")
    s.add_argument("keep")
    j = sub.add_parser("join", help="there: the whole, checked wheels in one folder")
    j.add_argument("wheels")
    j.add_argument("folders", nargs="+", help="where the parts and wheels may be")
    args = ap.parse_args(argv)
    if args.command == "pins":
        print("\n".join(f"{name}=={version}" for name, version in CARRIED.items()))
        return 0
    if args.command == "build":
        root = Path(__file__).resolve().parent.parent
        manifest, sizes = build(args.downloaded, args.out, tree_bytes(root))
        for wheel in manifest["wheels"]:
            print(f"{wheel['file']}: {wheel['size'] / 1e6:.1f} MB"
                  + (f" in {len(wheel['parts'])} parts" if wheel["parts"] else ""))
        for i, size in enumerate(sizes):
            print(f"run {i + 1} carries {args.out}/run{i + 1}: {size / 2**20:.1f} MiB with the "
                  f"working tree (limit {CARRY_LIMIT / 2**20:.0f} MiB)")
        return 0
    if args.command == "stash":
        return 1 if stash(args.carried, args.keep) else 0
    left_out = join(args.wheels, args.folders)
    return 3 if left_out else 0


if __name__ == "__main__":
    sys.exit(main())
