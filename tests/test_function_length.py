"""No function in gbm/ or kernels/ is over 80 lines (docs/architecture.md; STYLE: short
functions). A function's length is its own lines: from ``def`` to its last line, less its
docstring and less the functions and classes defined inside it, which are measured on
their own (a factory of small compiled functions, as ``kernels/split_math.py``, is as
long as its own statements)."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 80
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def own_lines(function):
    """The number of lines of ``function`` (an ast function node) that are its own."""
    lines = set(range(function.lineno, function.end_lineno + 1))
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        lines -= set(range(body[0].lineno, body[0].end_lineno + 1))
    for inner in ast.walk(function):
        if inner is not function and isinstance(inner, _FUNCTIONS + (ast.ClassDef,)):
            lines -= set(range(inner.lineno, inner.end_lineno + 1))
    return len(lines)


def long_functions(limit=LIMIT):
    """``path:line name (n lines)`` of every function of gbm/ and kernels/ over ``limit``."""
    found = []
    for folder in ("gbm", "kernels"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, _FUNCTIONS) and own_lines(node) > limit:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} "
                                 f"({own_lines(node)} lines)")
    return found


def test_no_function_is_over_80_lines():
    offenders = long_functions()
    assert not offenders, "functions over 80 lines:\n" + "\n".join(offenders)


def test_a_functions_own_lines():
    source = '''
def outer(a):
    """Two lines
    of docstring."""
    x = a + 1

    def inner():
        return x

    class Local:
        pass
    return inner()
'''
    outer = ast.parse(source).body[0]
    # def, x = ..., the blank line after it, the blank line after inner, return
    assert own_lines(outer) == 5
    assert own_lines(outer.body[2]) == 2  # inner: its def and its return
    assert long_functions(limit=60)  # the measure finds the longest ones of the tree
