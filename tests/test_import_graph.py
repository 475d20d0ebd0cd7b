"""gbm's import graph, built from the source (imports inside functions count): no cycle,
and no import up the layer order that docs/architecture.md documents (read from there)."""
from tests.support.import_graph import DOC, diagram
from tests.support.import_graph import graph as _graph
from tests.support.import_graph import layers as _layers
from tests.support.import_graph import unit as _unit


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


def test_the_picture_in_the_docs_is_current():
    text = DOC.read_text(encoding="utf-8")
    drawn = text.split("<!-- diagram -->\n")[1].split("<!-- /diagram -->")[0]
    # (diagram() refuses a FIT_PATH step that is not an import of the source)
    assert drawn == diagram(), "draw it again: python -m tests.support.import_graph --write"
