"""gbm's import graph, built from the source (imports inside functions count), and the
layers docs/architecture.md documents (read from there): what
``tests/test_import_graph.py`` checks."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
DOC = ROOT / "docs" / "architecture.md"


def modules():
    """{module name: path} of gbm/ and of kernels/ (installed as gbm.kernels)."""
    out = {}
    for folder, prefix in ((ROOT / "gbm", ["gbm"]), (ROOT / "kernels", ["gbm", "kernels"])):
        for path in sorted(folder.rglob("*.py")):
            parts = prefix + list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def imported(module, path, modules):
    """The gbm modules ``module`` imports (a package's name for a name that is not a
    module of it: ``from . import train`` in gbm.cli.main is gbm itself)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # a name that is a module is that module; any other name is base's
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != module:
                found.add(target)
    return found


def graph():
    found = modules()
    return {m: imported(m, p, found) for m, p in found.items()}


def layers():
    """{folder or module: layer} from the table between docs/architecture.md's layer
    markers."""
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- layers -->")[1].split("<!-- /layers -->")[0]
    layers = {}
    for line in block.splitlines():
        m = re.match(r"^\s*(\d+)\s+(gbm\S*(?:\s+gbm\S*)*)\s*$", line)
        if m:
            for name in m.group(2).split():
                layers[name] = int(m.group(1))
    return layers


def unit(module, layers):
    """The table's entry ``module`` belongs to: the longest one that is the module or a
    package above it (``gbm`` itself is only the package's __init__)."""
    best = None
    for name in layers:
        inside = module == name or (name != "gbm" and module.startswith(name + "."))
        if inside and (best is None or len(name) > len(best)):
            best = name
    return best
