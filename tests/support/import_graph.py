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


# The path of a fit's X from ``gbm.train`` to the kernels, as imports between the layers'
# entries: (importer, imported, what passes; numbered in order)
FIT_PATH = (("gbm.training", "gbm.data", "1 X, y: TrainingData"),
            ("gbm.training", "gbm.bins", "2 bin edges, binned rows"),
            ("gbm.training", "gbm.tree", "3 choose_grower, a round's trees"),
            ("gbm.tree", "gbm.runtime", "4 backend.kernels"),
            ("gbm.runtime", "gbm.kernels", "5 histograms, splits, partition"))


def unit_edges(graph_, layers_):
    """{(a, b)}: the layer table's entries with a module of ``a`` importing one of ``b``."""
    return {(unit(m, layers_), unit(t, layers_)) for m, targets in graph_.items()
            for t in targets if unit(m, layers_) != unit(t, layers_)}


def reduced(edges):
    """``edges`` less those another path of edges joins (the transitive reduction of an
    acyclic graph)."""
    out = {}
    for a, b in edges:
        out.setdefault(a, set()).add(b)

    def reaches(start, goal, skipped):
        seen, todo = set(), [n for n in out.get(start, ()) if (start, n) != skipped]
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(out.get(node, ()))
        return False

    return {(a, b) for a, b in edges if not reaches(a, b, (a, b))}


def diagram():
    """docs/architecture.md's picture, a Mermaid flowchart: the layer table's entries
    (bottom: layer 1), an arrow from each to those it imports where no longer path of
    imports joins them, and the thick numbered arrows of ``FIT_PATH``."""
    layers_ = layers()
    edges = unit_edges(graph(), layers_)
    thick = {(a, b) for a, b, _ in FIT_PATH}
    if not thick <= edges:
        raise ValueError(f"FIT_PATH names imports that are not there: {thick - edges}")

    def node(name):
        return name.replace(".", "_")

    lines = ["```mermaid", "flowchart BT"]
    for name in sorted(layers_, key=lambda n: (layers_[n], n)):
        lines.append(f'    {node(name)}["{name}"]')
    for a, b in sorted(reduced(edges) - thick, key=lambda e: (layers_[e[0]], e)):
        lines.append(f"    {node(a)} --> {node(b)}")
    for a, b, what in FIT_PATH:
        lines.append(f'    {node(a)} ==>|"{what}"| {node(b)}')
    lines.append("```")
    return "\n".join(lines) + "\n"


def _write():
    """Rewrite the picture between docs/architecture.md's diagram markers."""
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split("<!-- diagram -->\n")
    _, tail = rest.split("<!-- /diagram -->")
    DOC.write_text(f"{head}<!-- diagram -->\n{diagram()}<!-- /diagram -->{tail}",
                   encoding="utf-8")


if __name__ == "__main__":  # python -m tests.support.import_graph [--write]
    import sys

    _write() if "--write" in sys.argv[1:] else print(diagram(), end="")
