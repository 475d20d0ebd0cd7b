"""gbm's import graph, built from the source (imports inside functions count): no cycle,
and no import up the layer order that docs/architecture.md documents (read from there)."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"


def _modules():
    """{module name: path} of gbm/ and of kernels/ (installed as gbm.kernels)."""
    out = {}
    for folder, prefix in ((ROOT / "gbm", ["gbm"]), (ROOT / "kernels", ["gbm", "kernels"])):
        for path in sorted(folder.rglob("*.py")):
            parts = prefix + list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _imported(module, path, modules):
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


def _graph():
    modules = _modules()
    return {m: _imported(m, p, modules) for m, p in modules.items()}


def _layers():
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


def _unit(module, layers):
    """The table's entry ``module`` belongs to: the longest one that is the module or a
    package above it (``gbm`` itself is only the package's __init__)."""
    best = None
    for name in layers:
        inside = module == name or (name != "gbm" and module.startswith(name + "."))
        if inside and (best is None or len(name) > len(best)):
            best = name
    return best


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_is_read_from_the_source():
    graph = _graph()
    assert len(graph) > 100
    # a top-level import, one inside a function, a relative one from a subpackage
    assert "gbm.training.prepare" in graph["gbm.training.loop"]
    assert "gbm.kernels.cpu" in graph["gbm.numerics.exact"]  # imported on first use
    assert "gbm" in graph["gbm.cli.main"]  # from .. import train


def test_no_import_cycle():
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_one():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_module_has_a_documented_layer():
    layers = _layers()
    assert layers["gbm.kernels"] == 1 and layers["gbm.__main__"] == max(layers.values())
    graph = _graph()
    missing = sorted(m for m in graph if _unit(m, layers) is None)
    assert not missing, f"modules in no layer of docs/architecture.md: {missing}"
    unknown = sorted(name for name in layers if name not in graph)
    assert not unknown, f"docs/architecture.md's layers name no such module: {unknown}"


def _upward(graph, layers):
    """Imports from a module to one of the same or a higher layer (another entry)."""
    out = []
    for module, imported in sorted(graph.items()):
        a = _unit(module, layers)
        for target in sorted(imported):
            b = _unit(target, layers)
            if a != b and layers[b] >= layers[a]:
                out.append(f"{module} (layer {layers[a]}) imports {target} (layer {layers[b]})")
    return out


def test_imports_go_down_the_layers():
    upward = _upward(_graph(), _layers())
    assert not upward, "imports that do not go down docs/architecture.md's layers:\n" + \
        "\n".join(upward)


def test_an_upward_import_is_found():
    layers = _layers()
    graph = {"gbm.tree.grower": {"gbm.training.loop", "gbm.tree.structure"},
             "gbm.tree.structure": set(), "gbm.training.loop": set(),
             "gbm.objectives.base": {"gbm.tree.margins"}, "gbm.tree.margins": set()}
    assert _upward(graph, layers) == [
        "gbm.objectives.base (layer 7) imports gbm.tree.margins (layer 7)",
        "gbm.tree.grower (layer 7) imports gbm.training.loop (layer 10)"]
