"""Architecture rules checked on the source (docs/architecture.md): the modules of
kleene import each other without cycles, every import counting (top level, under
``TYPE_CHECKING`` and inside functions), and no module takes another's private names."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import kleene

ROOT = Path(kleene.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def resolve(name: str, known: dict[str, Path]) -> str | None:
    """The kleene module ``name`` denotes: itself, or the module holding it when
    ``name`` is an attribute of a module (``from kleene.x import y``)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def absolute(node: ast.ImportFrom, package: str) -> str:
    """The absolute module of a ``from ... import`` statement."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    anchor = parts[: len(parts) - node.level + 1]
    return ".".join([*anchor, *([node.module] if node.module else [])])


def imported(name: str, path: Path) -> list[tuple[str, str | None]]:
    """Every import of a module as (module, imported name or None), wherever it is."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node, package)
            found += [(base, a.name) for a in node.names]
    return found


def graph() -> dict[str, set[str]]:
    """The import graph of kleene's modules.

    Package ``__init__`` re-exports are looked through: ``from kleene.compiler import
    compile_query`` is an edge to the module the package takes ``compile_query`` from,
    not to the package. Without that, every submodule that imports a sibling through
    its package (``from kleene.lang import ast``) would form a cycle with the package's
    ``__init__``; re-exports are the one case where such a loop is allowed."""
    known = modules()
    raw = {name: imported(name, path) for name, path in known.items()}
    exports = {
        name: {alias: base for base, alias in raw[name] if alias is not None}
        for name, path in known.items()
        if path.name == "__init__.py"
    }

    def target(base: str, alias: str | None, seen: int = 0) -> str | None:
        if alias is not None and f"{base}.{alias}" in known:
            return f"{base}.{alias}"  # a submodule
        module = resolve(base, known)
        if module != base or alias is None or seen > 10:
            return module
        origin = exports.get(module, {}).get(alias)
        if origin is None or resolve(origin, known) is None:
            return module
        return target(origin, alias, seen + 1)

    edges: dict[str, set[str]] = {}
    for name, found in raw.items():
        targets = {target(base, alias) for base, alias in found}
        edges[name] = {t for t in targets if t is not None and t != name}
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_no_import_cycle() -> None:
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_vector_core_does_not_import_the_matcher() -> None:
    edges = graph()
    vector = [m for m in edges if m.startswith("kleene.runtime.vector")]
    assert vector
    assert all("kleene.runtime.matcher" not in edges[m] for m in vector)


KINDS = ("kleene.eventsets", "kleene.tpstream", "kleene.imprecise")


def test_the_runtime_imports_no_kind_of_query() -> None:
    """The SASE+ runtime sits below the other kinds' packages (they may use it, as the
    event-set matcher uses its snapshot format), so no import of it goes up into one."""
    edges = graph()
    runtime = [m for m in edges if within(m, "kleene.runtime")]
    assert runtime
    up = {m: [t for t in sorted(edges[m]) if any(within(t, k) for k in KINDS)] for m in runtime}
    found = {m: kinds for m, kinds in up.items() if kinds}
    assert not found, f"the runtime imports {found}"


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_every_kind_of_import_counts(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import kleene.events\n"
        "if TYPE_CHECKING:\n"
        "    from kleene.compiler.plan import Plan\n"
        "def f():\n"
        "    from kleene.runtime import matcher\n"
        "    from . import sibling\n"
    )
    found = imported("kleene.runtime.vector.m", source)
    assert ("kleene.events", None) in found
    assert ("kleene.compiler.plan", "Plan") in found
    assert ("kleene.runtime", "matcher") in found
    assert ("kleene.runtime.vector", "sibling") in found


def test_find_cycle_reports_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(edges) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def private_uses(path: Path) -> list[str]:
    """Private names a module takes from elsewhere: ``from m import _name``, and
    ``obj._name`` on an object other than ``self``/``cls`` when the module itself
    defines nothing called ``_name`` (so the name belongs to another module)."""
    nodes = list(ast.walk(ast.parse(path.read_text(), str(path))))
    own: set[str] = set()
    for n in nodes:
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(n.name)
        elif isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign):
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                if isinstance(t, ast.Name | ast.Attribute):
                    own.add(t.id if isinstance(t, ast.Name) else t.attr)
    found = []
    for n in nodes:
        if isinstance(n, ast.ImportFrom):
            found += [f"from {n.module} import {a.name}" for a in n.names if private(a.name)]
        elif (
            isinstance(n, ast.Attribute)
            and private(n.attr)
            and n.attr not in own
            and not (isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"))
        ):
            found.append(f"line {n.lineno}: {ast.unparse(n)}")
    return found


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_private_imports_across_modules() -> None:
    for name, path in modules().items():
        imports = [u for u in private_uses(path) if u.startswith("from ")]
        assert not imports, f"{name}: {imports}"


def test_runtime_uses_no_other_modules_private_names() -> None:
    for name, path in modules().items():
        uses = private_uses(path) if name.startswith("kleene.runtime") else []
        assert not uses, f"{name}: {uses}"


def test_private_uses_are_found(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from kleene.query import _hidden\n"
        "class A:\n"
        "    def _mine(self): return self._x\n"
        "def f(a, b):\n"
        "    a._mine()\n"
        "    return b._theirs()\n"
    )
    assert private_uses(source) == ["from kleene.query import _hidden", "line 6: b._theirs"]


# --- the plan is the runtimes' only vocabulary (issue 10, item 2) ----------------------

#: Modules that still interpret the AST's expressions; the compiler's expression IR
#: (kleene/compiler/expr.py) replaces that, and then they leave this list.


# the interval engine's query object and rule set belong to the front end
IMPRECISE_FRONT_END = {"kleene.imprecise.query", "kleene.imprecise.rules"}


def back_end() -> dict[str, Path]:
    """The runtimes and the Spark layer: the modules that must speak only the plan."""
    return {
        name: path
        for name, path in modules().items()
        if name.split(".")[:2] in (["kleene", "runtime"], ["kleene", "spark"])
        or (name.startswith("kleene.imprecise.") and name not in IMPRECISE_FRONT_END)
    }


def front_end_imports(name: str, path: Path) -> list[str]:
    """Every import of the front end (``kleene.lang`` or a module of it) by a module,
    wherever in the module it is."""
    found = []
    for base, alias in imported(name, path):
        full = base if alias is None else f"{base}.{alias}"
        if full == "kleene.lang" or full.startswith("kleene.lang."):
            found.append(full)
    return found


def ast_reads(path: Path) -> list[str]:
    """Reads of a plan's AST: ``<...plan>.query`` (``plan.query``, ``self.plan.query``)."""
    return [
        f"line {n.lineno}: {ast.unparse(n)}"
        for n in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(n, ast.Attribute)
        and n.attr == "query"
        and ast.unparse(n.value).lower().endswith("plan")
    ]


def test_runtime_and_spark_import_nothing_of_the_front_end() -> None:
    uses = {name: front_end_imports(name, path) for name, path in back_end().items()}
    found = {name: u for name, u in uses.items() if u}
    assert not found, f"modules importing kleene.lang: {found}"


def test_runtime_and_spark_never_read_the_plans_ast() -> None:
    found = {name: uses for name, path in back_end().items() if (uses := ast_reads(path))}
    assert not found, f"reads of Plan.query: {found}"


def test_front_end_imports_and_ast_reads_are_found(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        textwrap.dedent("""\
            from typing import TYPE_CHECKING
            import kleene.lang.ast as tree
            from kleene.vocabulary import Strategy
            if TYPE_CHECKING:
                from kleene.lang.ast import Query
            def f(plan, self, spec):
                from kleene import lang
                from ...lang import to_text
                spec.query, self.query
                return plan.query, self.plan.query
            """)
    )
    assert front_end_imports("kleene.runtime.vector.m", source) == [
        "kleene.lang.ast",
        "kleene.lang.ast.Query",
        "kleene.lang",
        "kleene.lang.to_text",
    ]
    assert ast_reads(source) == ["line 10: plan.query", "line 10: self.plan.query"]


CORES = ("kleene.runtime.nfa", "kleene.runtime.postpone", "kleene.runtime.vector")
DRIVERS = ("matcher", "admission", "clock", "decide", "output", "state")


def test_the_matcher_drives_every_core_alike() -> None:
    """The matcher and its jobs reach the cores only through the protocol of
    kleene.runtime.core; kleene.runtime.choice names and builds them."""
    edges = graph()
    for name in DRIVERS:
        module = f"kleene.runtime.{name}"
        assert module in edges
        assert not [m for m in edges[module] if m.startswith(CORES)], module


MAX_MODULE_LINES, MAX_FUNCTION_LINES = 600, 80


def sizes(path: Path) -> tuple[int, list[tuple[int, str]]]:
    """A module's line count and the line count of each of its functions."""
    text = path.read_text()
    functions = [
        (n.end_lineno - n.lineno + 1, n.name)
        for n in ast.walk(ast.parse(text, str(path)))
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.end_lineno is not None
    ]
    return len(text.splitlines()), functions


def test_pieces_are_small() -> None:
    for name, path in modules().items():
        lines, functions = sizes(path)
        assert lines <= MAX_MODULE_LINES, f"{name}: {lines} lines"
        long = [f"{f} ({n} lines)" for n, f in functions if n > MAX_FUNCTION_LINES]
        assert not long, f"{name}: {long}"


def test_sizes_are_measured(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    x = 1\n    return x\n\n\nclass A:\n    def g(self): pass\n")
    assert sizes(source) == (7, [(3, "f"), (1, "g")])
