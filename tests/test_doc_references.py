"""What the docs and comments point at exists, and the limits they state are gbm's."""
import re
from pathlib import Path

from gbm.data.categorical import MAX_CATEGORIES
from gbm.io.validation import MAX_CUTS

ROOT = Path(__file__).resolve().parent.parent
MAX_BIN = MAX_CUTS + 1  # value bins: one more than the bin edges


def _texts():
    for pattern in ("README.md", "setup.py", "gbm/**/*.py", "kernels/**/*.py", "bench/**/*.py",
                    "bench/*.sh", "docs/**/*.md"):
        for path in ROOT.glob(pattern):
            yield path, path.read_text(encoding="utf-8")


def test_cited_test_files_exist():
    missing = []
    for path, text in _texts():
        for cited in set(re.findall(r"\btests/[\w/]+\.py\b", text)):
            if not (ROOT / cited).is_file():
                missing.append(f"{path.relative_to(ROOT)} cites {cited}")
    assert not missing, "\n".join(missing)


def test_cited_source_files_exist():
    # gbm/... and kernels/... paths in docs, docstrings and comments (a folder ends in /)
    missing = []
    for path, text in _texts():
        for cited in set(re.findall(r"(?<![\w./-])((?:gbm|kernels)/(?:\w+/)*(?:\w+\.py)?)(?![\w*])",
                                    text)):
            if not (ROOT / cited).exists():
                missing.append(f"{path.relative_to(ROOT)} cites {cited}")
    assert not missing, "\n".join(sorted(missing))


def _headings(doc):
    """The headings of Markdown file ``doc`` (fenced code left out)."""
    text = re.sub(r"^```.*?^```", "", doc.read_text(encoding="utf-8"), flags=re.M | re.S)
    return [h.strip() for h in re.findall(r"^#+\s+(.+)$", text, flags=re.M)]


def _anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def test_cited_sections_exist():
    # ``docs/x.md, "Section"`` in docs, docstrings and comments, and Markdown links to
    # ``x.md#anchor``: a heading of that file
    missing, checked = [], 0
    for path, text in _texts():
        flat = " ".join(text.split())  # a citation may be wrapped
        for doc, section in re.findall(r"\b(docs/\w+\.md),? \"([^\"]+)\"", flat):
            checked += 1
            if section not in _headings(ROOT / doc):
                missing.append(f"{path.relative_to(ROOT)} cites {doc}, {section!r}")
        for doc, anchor in re.findall(r"\(([\w./]*\.md)#([\w-]+)\)", text):
            checked += 1
            target = (path.parent / doc).resolve()
            if not target.is_file() or anchor not in {_anchor(h) for h in _headings(target)}:
                missing.append(f"{path.relative_to(ROOT)} links to {doc}#{anchor}")
    assert not missing, "\n".join(sorted(missing))
    assert checked > 20  # the patterns find the citations


def test_the_anchors_are_githubs():
    assert _anchor("Cross-validation: `gbm.cv`") == "cross-validation-gbmcv"
    assert _anchor("XGBoost's JSON format") == "xgboosts-json-format"
    assert _anchor("Going on after a lost worker (`max_recoveries`)") == \
        "going-on-after-a-lost-worker-max_recoveries"


def test_no_text_cites_the_design_notes_outside_the_repository():
    cited = [f"{path.relative_to(ROOT)}" for path, text in _texts()
             if re.search(r"\b(DESIGN|DISTRIBUTED)\.md\b", text)]
    assert not cited, f"cite docs/architecture.md or docs/distributed.md instead: {cited}"


def _number(text):
    return int(text.replace(",", ""))


def test_stated_max_bin_and_category_limits_are_gbms():
    stated = []
    for path, text in _texts():
        if path.suffix != ".md":
            continue
        flat = " ".join(text.split())
        for match in re.finditer(r"`max_bin`\**\s+is\s+(?:at most|capped at)\s+\**([\d,]+)", flat):
            stated.append((path.name, "max_bin", _number(match.group(1)), MAX_BIN))
        for match in re.finditer(r"categorical feature (?:has|may have) at most ([\d,]+)", flat):
            stated.append((path.name, "categories", _number(match.group(1)), MAX_CATEGORIES))
    wrong = [s for s in stated if s[2] != s[3]]
    assert not wrong, f"docs state limits other than gbm's (doc, what, stated, real): {wrong}"
    assert {s[:2] for s in stated} >= {("coming_from_xgboost.md", "max_bin"),
                                       ("coming_from_xgboost.md", "categories")}
