"""Mutation check: plausible one- or two-line bugs, each applied alone to a copy of the
repository, and the tests that should catch it run against the copy; prints the mutation
score (mutants caught / mutants).

``python -m bench mutation`` runs every mutant against the working tree's tests;
``--tests-rev main`` runs them against the test files as they are at that revision (the
"before" column of bench/MUTATION.md). ``--list`` shows the mutants, ``--only a,b`` runs
some, ``--whole-suite`` runs the whole CPU test folder for each (to confirm a mutant the
selection missed is missed by every test; hours per mutant that survives).

How it runs:

* The copy holds the working tree's tracked and untracked (not ignored) files, in a
  temporary folder; ``gbm/kernels`` there is a link to its ``kernels/`` (the installed
  package maps ``gbm.kernels`` to the original folder), and ``PYTHONPATH`` puts the copy
  first. A check before the first mutant proves that ``gbm`` and ``gbm.kernels`` import
  from the copy.
* Each mutant replaces one exact text, which must occur exactly once in its file (a
  mutant whose text is gone stops the run: the list must follow the code), runs
  ``pytest -x`` on its test selection, and restores the file.
* Numba's compile cache: ``NUMBA_CACHE_DIR`` is a fresh folder of the run. The kernels'
  cache folder is keyed by a hash of every kernel source (kernels/jit.py), so a mutant of
  ``kernels/`` compiles every kernel afresh and no stale kernel can load; mutants of
  ``gbm/`` leave compiled code alone. ``--fresh-cache`` gives each mutant its own folder.
* A mutant is caught when pytest fails (or errors, or runs past ``--timeout``: the table
  says "timeout" then, since a loaded machine can cause one too). First the selections
  run on the unmutated copy (``--skip-baseline`` skips it): the working tree's tests must
  pass; tests of ``--tests-rev`` that fail there (behaviour changed since that revision)
  can catch nothing, so they are left out of the before column and listed (``left_out``
  in the JSON).
* ``--json`` is rewritten after every mutant, so a stopped run keeps what it measured;
  ``--markdown-from`` prints the table of one or more such files.

The test selection of a mutant is the files that test the code it changes: ``SPLIT`` for
the split formulas and kernels, ``GROWER`` for tree growth, ``SAMPLING``,
``MODEL_FILES``, ``BINNING``; all but the last end with tests/test_model_fixtures.py
(the stored model files: a change detector, not an oracle, but the old suite's only
catch of several mutants). Files absent at ``--tests-rev`` are left out of the
selection. A caught mutant takes seconds; the whole CPU suite about 2-5 minutes per
mutant on a 2-core machine, so ``--whole-suite`` is for the mutants a selection misses.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Test selections, fast and targeted files first (pytest -x stops at the first failure);
# the fixtures last, so that "caught by" names an oracle where one catches the mutant.
# Entries are files or pytest node ids. tests/test_training.py is split: its xgboost
# parity and determinism tests (20,000-30,000 rows, 3 of its 4 minutes) run only for the
# mutants they were seen to catch (min_child_weight, quantile cuts).
TRAINING_FAST = tuple(f"tests/test_training.py::{name}" for name in (
    "test_known_best_split_is_found", "test_missing_values_learn_their_direction",
    "test_root_split_equals_xgboost_on_exact_bins",
    "test_lossguide_respects_max_leaves_and_depthwise_respects_max_depth",
    "test_lossguide_splits_best_leaf_first", "test_pred_leaf_partitions_rows_like_xgboost"))
SPLIT_KERNELS = tuple(f"tests/test_kernels.py::{name}" for name in (
    "test_evaluate_splits_matches_reference", "test_evaluate_splits_known_best",
    "test_node_weights_match_reference"))  # the twin tests of the split kernels
FIXTURES = ("tests/test_model_fixtures.py",)
SPLIT = ("tests/test_oracles_split.py",) + SPLIT_KERNELS + (
    "tests/test_oracles_xgboost.py", "tests/test_constraints.py") + TRAINING_FAST + FIXTURES
GROWER = ("tests/test_oracles_xgboost.py", "tests/test_constraints.py") + TRAINING_FAST + FIXTURES
SAMPLING = ("tests/test_sampling_contract.py", "tests/test_sampling.py", "tests/test_forest.py"
            ) + FIXTURES
MODEL_FILES = ("tests/test_model_corruption.py", "tests/test_model_validation.py",
               "tests/test_fuzz_model_files.py")
BINNING = ("tests/test_oracles_xgboost.py", "tests/test_binning.py", "tests/test_training.py"
           ) + FIXTURES
SELF_TEST = "test_mutation_list.py"  # checks this list against the code, not the code
SPLIT_AND_PARITY = tuple(t for t in SPLIT if t not in TRAINING_FAST + FIXTURES) + (
    "tests/test_training.py",) + FIXTURES


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str
    new: str
    tests: tuple
    what: str
    more: tuple = ()  # further (old, new) edits of the same file, for two-line mutants

    @property
    def edits(self):
        return ((self.old, self.new),) + self.more


MUTANTS = [
    # -- split formulas (kernels/split_math.py): compiled into kernels and twins alike
    Mutant("l1_sign", "kernels/split_math.py",
           "        if g < -alpha:\n            return g + alpha",
           "        if g < -alpha:\n            return g - alpha", SPLIT,
           "L1 soft threshold with the wrong sign for negative G"),
    Mutant("max_delta_step_sign", "kernels/split_math.py",
           "w = math.copysign(max_delta_step, w)", "w = max_delta_step", SPLIT,
           "max_delta_step cap loses the weight's sign"),
    Mutant("max_delta_step_gain", "kernels/split_math.py",
           "        if max_delta_step == 0.0:\n            t = threshold_l1(g, alpha)",
           "        if max_delta_step >= 0.0:\n            t = threshold_l1(g, alpha)", SPLIT,
           "the gain ignores the cap (the weight keeps it)"),
    Mutant("lambda_in_weight", "kernels/split_math.py",
           "        denom = h + lam\n        if denom <= 0.0:\n            return 0.0\n"
           "        w = -threshold_l1",
           "        denom = h\n        if denom <= 0.0:\n            return 0.0\n"
           "        w = -threshold_l1", SPLIT, "leaf weight without reg_lambda"),
    Mutant("l1_in_gain_given_weight", "kernels/split_math.py",
           "        return -(mul(mul(2.0, g), w) + mul(mul(h + lam, w), w) + mul(mul(2.0, alpha), abs(w)))",
           "        return -(mul(mul(2.0, g), w) + mul(mul(h + lam, w), w) - mul(mul(2.0, alpha), abs(w)))",
           SPLIT, "L1 penalty added with the wrong sign in the bounded (monotone) gain"),
    Mutant("bounds_swapped", "kernels/split_math.py",
           "        if w < lower:\n            return lower",
           "        if w < lower:\n            return upper", SPLIT,
           "a weight below its lower bound is set to the upper one"),
    # -- the CPU split kernel (kernels/cpu/split.py)
    Mutant("plain_path_no_parent", "kernels/cpu/split_scan.py",
           "gain = gl * gl / (hl + reg_lambda) + gr * gr / (hr + reg_lambda) - parent",
           "gain = gl * gl / (hl + reg_lambda) + gr * gr / (hr + reg_lambda)", SPLIT,
           "the fast path forgets to subtract the parent's gain"),
    Mutant("min_child_weight_le", "kernels/cpu/split.py",
           "            if hl < min_child_weight or hr < min_child_weight:\n                continue",
           "            if hl <= min_child_weight or hr <= min_child_weight:\n                continue",
           SPLIT_AND_PARITY, "min_child_weight compared with <= instead of <"),
    Mutant("monotone_direction", "kernels/cpu/split.py",
           "(direction_sign > 0 and wl > wr)", "(direction_sign > 0 and wl < wr)", SPLIT,
           "an increasing constraint keeps the decreasing splits"),
    Mutant("ties_last_threshold", "kernels/cpu/split.py",
           "            if gain > best:\n                best = gain\n                best_bin, best_left",
           "            if gain >= best:\n                best = gain\n                best_bin, best_left",
           SPLIT, "equal gains: the last threshold wins instead of the first"),
    Mutant("missing_direction", "kernels/cpu/split.py",
           "        left_g = miss_g if direction == 1 else 0",
           "        left_g = miss_g if direction == 0 else 0", SPLIT,
           "missing values' gradients sent the wrong way (their hessians not)"),
    # -- tree growth (gbm/tree/grower.py)
    Mutant("lossguide_smallest_first", "gbm/tree/grower.py",
           "heapq.heappush(heap, (-float(splits.gain[i]), int(ids[i])))",
           "heapq.heappush(heap, (float(splits.gain[i]), int(ids[i])))", GROWER,
           "lossguide expands the smallest-gain leaf first"),
    Mutant("lossguide_ties_highest_id", "gbm/tree/grower.py",
           "heapq.heappush(heap, (-float(splits.gain[i]), int(ids[i])))",
           "heapq.heappush(heap, (-float(splits.gain[i]), -int(ids[i])))", GROWER,
           "lossguide ties go to the highest node id",
           (("            _, node = heapq.heappop(heap)\n",
             "            _, node = heapq.heappop(heap)\n            node = -node\n"),)),
    Mutant("gamma_strict", "gbm/tree/grower.py",
           'out.ok = (out.gain > _MIN_GAIN) & (out.gain >= p["gamma"])',
           'out.ok = (out.gain > _MIN_GAIN) & (out.gain > p["gamma"])', GROWER,
           "a split whose gain equals gamma is pruned"),
    Mutant("monotone_child_bounds", "gbm/tree/grower.py",
           "left_bounds[up, 1] = right_bounds[up, 0] = mid[up]",
           "left_bounds[up, 0] = right_bounds[up, 1] = mid[up]", GROWER,
           "increasing constraint: children's bounds on the wrong sides"),
    Mutant("depthwise_max_leaves_worst", "gbm/tree/grower.py",
           "best = np.lexsort((ids[chosen], -splits.gain[chosen], trees))",
           "best = np.lexsort((ids[chosen], splits.gain[chosen], trees))", GROWER,
           "depthwise with max_leaves binding keeps the worst splits of a level"),
    Mutant("threshold_next_cut", "gbm/tree/grower.py",
           "self.data.thresholds(feature[numeric],\n"
           "                                                            split_bin[numeric])",
           "self.data.thresholds(feature[numeric],\n"
           "                                                            split_bin[numeric] + 1)",
           GROWER, "the raw threshold stored is the next bin's cut"),
    # -- sampling (gbm/training/rounds.py, gbm/tree/sampling.py)
    Mutant("rows_shared_by_groups", "gbm/training/rounds.py",
           'row_sample(p["random_state"], round_, group, ids, p["subsample"], parallel)',
           'row_sample(p["random_state"], round_, 0, ids, p["subsample"], parallel)',
           SAMPLING, "every class of a round shares one row sample"),
    Mutant("rows_shared_by_parallel_trees", "gbm/training/rounds.py",
           'row_sample(p["random_state"], round_, group, ids, p["subsample"], parallel)',
           'row_sample(p["random_state"], round_, group, ids, p["subsample"])',
           SAMPLING, "the parallel trees of a round share one row sample"),
    Mutant("columns_shared_by_groups", "gbm/training/rounds.py",
           "ColumnSampler(p, fit.data.n_features, round_, group, parallel)",
           "ColumnSampler(p, fit.data.n_features, round_, 0, parallel)", SAMPLING,
           "every class of a round shares one column sample"),
    Mutant("levels_not_nested", "gbm/tree/sampling.py",
           "self._levels[depth] = _choose(key, self.tree, self.by_level, self.weights)",
           "self._levels[depth] = _choose(key, np.arange(self.n_features), self.by_level,\n"
           "                                          self.weights)",
           SAMPLING, "a level draws from all features, not from the tree's"),
    Mutant("column_count_plus_one", "gbm/tree/sampling.py",
           "    k = max(1, int(rate * features.size))\n    draws",
           "    k = max(1, int(rate * features.size) + 1)\n    draws", SAMPLING,
           "one feature more than floor(rate * n) per draw"),
    # -- model files (gbm/io/tree_checks.py)
    Mutant("child_index_check_dropped", "gbm/io/tree_checks.py",
           "bad = inner & ((left <= ids) | (left >= n - 1))", "bad = inner & (left <= ids)",
           MODEL_FILES, "no check that both children lie inside the tree"),
    Mutant("right_child_check_weak", "gbm/io/tree_checks.py",
           "(right[inner] != left[inner] + 1).any()", "(right[inner] < left[inner]).any()",
           MODEL_FILES, "right child only checked to be after the left"),
    Mutant("default_left_range", "gbm/io/tree_checks.py",
           'if (arrays["default_left"] > 1).any():', 'if (arrays["default_left"] > 2).any():',
           MODEL_FILES, "default_left 2 accepted"),
    Mutant("category_code_off_by_one", "gbm/io/tree_checks.py",
           "        if bits[n:].any():\n            code = n",
           "        if bits[n + 1:].any():\n            code = n", MODEL_FILES,
           "a category set may hold the code one past the feature's categories"),
    # -- bin edges (gbm/bins/cuts.py)
    Mutant("quantile_cut_off_by_one", "gbm/bins/cuts.py",
           "below = before[lo + 1:hi] - before[lo]", "below = before[lo:hi - 1] - before[lo]",
           BINNING, "quantile boundaries shifted by one distinct value"),
    Mutant("midpoint_lower_value", "gbm/bins/cuts.py",
           "mid = (lower.astype(np.float64) + upper.astype(np.float64)) * 0.5",
           "mid = lower.astype(np.float64)", BINNING,
           "cuts at the lower value instead of halfway (then nudged up by one float)"),
]


def _git(*args, **kw):
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, **kw)


def make_copy(dest, tests_rev=None):
    """The working tree's files (tracked and untracked, not ignored) under ``dest``; with
    ``tests_rev``, that revision's ``tests/`` as ``dest/tests_<rev>`` too."""
    files = _git("ls-files", "-co", "--exclude-standard", "-z").stdout.decode().split("\0")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    os.symlink("../kernels", dest / "gbm" / "kernels")
    if tests_rev:
        archive = _git("archive", tests_rev, "tests").stdout
        unpack = dest / ".tests_rev"
        unpack.mkdir()
        subprocess.run(["tar", "-x", "-C", str(unpack)], input=archive, check=True)
        (unpack / "tests").rename(dest / _rev_dir(tests_rev))
        unpack.rmdir()


def _rev_dir(rev):
    return "tests_" + re.sub(r"\W", "_", rev)


def _env(copy, cache):
    env = dict(os.environ, PYTHONPATH=str(copy), NUMBA_CACHE_DIR=str(cache))
    env.pop("PYTEST_ADDOPTS", None)
    return env


def check_imports(copy, env):
    code = ("import gbm, gbm.kernels.jit as j, gbm.kernels.split_math as s; "
            "print(gbm.__file__); print(j.__file__); print(s.__file__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=copy, env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    bad = [p for p in out if not Path(p).resolve().is_relative_to(Path(copy).resolve())]
    if bad:
        raise SystemExit(f"the copy does not import its own gbm: {bad}")


# a test id in pytest's short summary: "FAILED <id> - <message>" (ids may hold spaces)
_FAILED = r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$"


def _skip_args(skip):
    """pytest options leaving out test ids ``skip`` (whole files: --ignore)."""
    return [f"--deselect={t}" if "::" in t else f"--ignore={t}" for t in skip]


def run_tests(copy, tests, env, timeout, skip=()):
    """(rc, first failing test or pytest's last words, seconds); rc None: timed out."""
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                               *_skip_args(skip), *tests], cwd=copy, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout", time.perf_counter() - start
    failed = re.search(_FAILED, proc.stdout, re.M)
    return proc.returncode, failed.group(1) if failed else proc.stdout.strip()[-200:], \
        time.perf_counter() - start


def failing_tests(copy, tests, env):
    """(rc, every failing or erroring test id, seconds): the whole selection, no -x."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider",
                           *tests], cwd=copy, env=env, capture_output=True, text=True)
    failed = list(dict.fromkeys(re.findall(_FAILED, proc.stdout, re.M)))
    return proc.returncode, failed, time.perf_counter() - start


def apply(copy, mutant):
    """Mutate the copy's file; returns (original text, its stat) for ``restore``."""
    path = copy / mutant.path
    stat = path.stat()
    original = mutated = path.read_text()
    for old, new in mutant.edits:
        count = mutated.count(old)
        if count != 1:
            raise SystemExit(f"mutant {mutant.name}: its text occurs {count} times in "
                             f"{mutant.path} (expected once): update bench/mutation.py")
        mutated = mutated.replace(old, new)
    path.write_text(mutated)
    return original, stat


def restore(copy, mutant, saved):
    """The original text and modification time (Numba's cache index checks it, so the
    unmutated kernels' compiled code stays valid)."""
    original, stat = saved
    path = copy / mutant.path
    path.write_text(original)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _selection(copy, tests, folder, whole_suite=False):
    """``tests`` moved to test folder ``folder``, less those absent there; the whole
    folder with ``whole_suite``."""
    if whole_suite:
        return [folder]
    out = []
    for t in tests:
        t = folder + t[len("tests"):]
        if (copy / t.split("::")[0]).is_file():
            out.append(t)
    return out


def _outcome(rc, failed, seconds):
    caught = rc != 0 and rc != 5  # 5: pytest collected nothing
    return {"caught": caught, "rc": rc, "by": failed if caught else "",
            "seconds": round(seconds)}


def _cell(outcome):
    if not outcome["caught"]:
        return "**survived**"
    if outcome["rc"] is None:
        return "timeout"
    by = outcome["by"]
    if "::" not in by:  # no failing test named: pytest's last words (a collection error...)
        return f"caught (rc {outcome['rc']})"
    return "`" + by.split("/", 1)[-1].replace("|", "\\|") + "`"


def markdown(results, columns):
    """A Markdown table of ``results`` (``run_mutants``' list), one column per run: the
    first failing test of each caught mutant."""
    head = "| mutant | file | what | " + " | ".join(f"{c}: caught by" for c in columns) + " |"
    lines = [head, "|" + "---|" * (3 + len(columns))]
    for r in results:
        cells = [_cell(r[c]) for c in columns]
        lines.append(f"| `{r['name']}` | `{r['path']}` | {r['what']} | " + " | ".join(cells) + " |")
    totals = [f"**{sum(r[c]['caught'] for r in results)}/{len(results)}**" for c in columns]
    lines.append("| score | | | " + " | ".join(totals) + " |")
    return "\n".join(lines)


def run_mutants(mutants, tests_rev=None, timeout=1200, fresh_cache=False, baseline=True,
                whole_suite=False, columns=("after", "before"), save=None):
    """Each mutant against the current tests ("after") and, with ``tests_rev``, against
    that revision's tests ("before"), in one copy: a mutant's kernels compile once for
    both; ``columns`` may leave one out. ``save(results, skip)`` is called after each
    mutant. Returns a list of dicts (name, path, what, after, before) and ``skip``: per
    column, the tests left out (those failing on the unmutated copy: before column only)."""
    folders = {"after": "tests"}
    if tests_rev:
        folders["before"] = _rev_dir(tests_rev)
    folders = {c: f for c, f in folders.items() if c in columns}
    if not folders:
        raise SystemExit("no column to run (the before column needs --tests-rev)")
    results = []
    with tempfile.TemporaryDirectory(prefix="gbm-mutation-") as tmp:
        copy, cache = Path(tmp) / "repo", Path(tmp) / "numba-cache"
        copy.mkdir()
        make_copy(copy, tests_rev)
        env = _env(copy, cache)
        check_imports(copy, env)
        # SELF_TEST checks that every mutant's text is in the code: in a
        # mutated copy it fails by design, so the whole-suite runs leave it out
        skip = {column: ((f"{folder}/{SELF_TEST}",)
                         if whole_suite and (copy / folder / SELF_TEST).is_file() else ())
                for column, folder in folders.items()}
        if baseline:
            for column, folder in folders.items():
                union = list(dict.fromkeys(t for m in mutants
                                           for t in _selection(copy, m.tests, folder,
                                                               whole_suite)))
                rc, failed, seconds = failing_tests(copy, union, env)
                print(f"baseline {column} ({len(union)} selections, {seconds:.0f} s): rc {rc} "
                      f"{' '.join(failed)}", flush=True)
                if rc != 0 and (column == "after" or not failed):
                    raise SystemExit("the unmutated copy fails its tests: no score")
                # The old tests that fail on today's unmutated code (behaviour changed
                # since) can catch nothing: left out of the before column, and listed.
                skip[column] += tuple(failed)
        for i, m in enumerate(mutants):
            if fresh_cache:
                env = _env(copy, Path(tmp) / f"numba-cache-{i}")
            row = {"name": m.name, "path": m.path, "what": m.what}
            saved = apply(copy, m)
            try:
                for column, folder in folders.items():
                    tests = _selection(copy, m.tests, folder, whole_suite)
                    rc, failed, seconds = (run_tests(copy, tests, env, timeout, skip[column])
                                           if tests
                                           else (0, "no test file", 0.0))
                    row[column] = dict(_outcome(rc, failed, seconds), tests=tests)
            finally:
                restore(copy, m, saved)
            results.append(row)
            if save:
                save(results, skip)
            print(f"{m.name:30} " + "  ".join(
                f"{c}: {'caught  ' if row[c]['caught'] else 'SURVIVED'} {row[c]['seconds']:4d} s "
                f"{row[c]['by']}" for c in folders), flush=True)
    return results, skip


def main(argv=None, prog=None):
    ap = argparse.ArgumentParser(prog=prog, description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--tests-rev", help="also run each mutant against the tests of this git "
                    "revision (e.g. main): the 'before' column")
    ap.add_argument("--only", help="comma list of mutant names")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds per test run")
    ap.add_argument("--fresh-cache", action="store_true",
                    help="a new NUMBA_CACHE_DIR per mutant")
    ap.add_argument("--skip-baseline", action="store_true")
    ap.add_argument("--whole-suite", action="store_true", help="each mutant against the "
                    "whole CPU test folder instead of its selection")
    ap.add_argument("--columns", default="after,before", help="comma list of the columns "
                    "to run: after (the working tree's tests), before (--tests-rev's)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--markdown-from", help="comma list of --json files: print their "
                    "table and exit")
    args = ap.parse_args(argv)
    if args.markdown_from:
        merged = {}  # a later file's column of a mutant replaces an earlier one's
        for f in args.markdown_from.split(","):
            for r in json.loads(Path(f).read_text())["results"]:
                merged.setdefault(r["name"], {}).update(r)
        order = {m.name: i for i, m in enumerate(MUTANTS)}
        results = sorted(merged.values(), key=lambda r: order.get(r["name"], len(order)))
        columns = [c for c in ("before", "after") if all(c in r for r in results)]
        print(markdown(results, columns))
        return 0
    mutants = MUTANTS
    if args.only:
        names = args.only.split(",")
        unknown = set(names) - {m.name for m in MUTANTS}
        if unknown:
            ap.error(f"unknown mutants {sorted(unknown)}")
        mutants = [m for m in MUTANTS if m.name in names]
    if args.list:
        for m in mutants:
            print(f"{m.name:30} {m.path:22} {m.what}")
        return 0
    def save(results, skip):
        if args.json:
            Path(args.json).write_text(json.dumps(
                {"tests_rev": args.tests_rev, "whole_suite": args.whole_suite,
                 "left_out": skip, "results": results}, indent=1))

    results, skip = run_mutants(mutants, args.tests_rev, args.timeout, args.fresh_cache,
                          not args.skip_baseline, args.whole_suite,
                          tuple(args.columns.split(",")), save)
    for column in ("before", "after"):
        if results and column in results[0]:
            caught = sum(r[column]["caught"] for r in results)
            print(f"mutation score {column}: {caught}/{len(results)} caught")
    save(results, skip)
    return 0


if __name__ == "__main__":
    sys.exit(main())
