"""The layout's rules, checked on the source: no import cycles, the engine never imports its front
ends, and every import points down the layers (docs/architecture.md draws them)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("obook", "api", "workers")

# Lower layers first; a module may import from its own layer and the ones below.
LAYERS = (
    ("obook", "obook.errors", "obook.jit", "obook.rng", "obook.stats", "obook.config"),
    ("obook.go",),
    ("obook.playout",),
    ("obook.search",),
    ("obook.book.keys", "obook.book.rules", "obook.book.minimax"),  # pure book rules: below the store
    ("obook.store",),
    ("obook.book",),
    ("obook.grid", "obook.gtp", "obook.analysis"),
    ("obook.commands", "obook.cli"),
    ("api", "workers"),
)
# Mines shares only the base layer with the Go engine.
MINES = "obook.mines"


def module_files() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            modules[name.removesuffix(".__init__")] = path
    return modules


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports anywhere in its body (lazy imports included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.add(full if full in modules else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in modules and m != name}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = module_files()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def layer_of(module: str) -> int:
    best, rank = -1, None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), index
    assert rank is not None, f"{module} is in no layer: add it to LAYERS"
    return rank


def test_there_are_no_import_cycles(graph):
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
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
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert cycles == []


def test_the_engine_never_imports_its_front_ends(graph):
    wrong = sorted((m, d) for m, deps in graph.items() if m.startswith("obook") for d in deps
                   if d.split(".")[0] in ("api", "workers"))
    assert wrong == []


def test_imports_point_down_the_layers(graph):
    upward = []
    for module, deps in sorted(graph.items()):
        if module.startswith(MINES):
            upward += [(module, d) for d in sorted(deps) if not d.startswith(MINES) and layer_of(d) > 0
                       and not d.startswith("obook.commands")]
            continue
        if module.startswith("obook.commands"):
            continue  # the commands stand on everything, Mines included
        upward += [(module, d) for d in sorted(deps) if not d.startswith(MINES) and layer_of(d) > layer_of(module)]
    assert upward == []


def test_the_book_rules_know_nothing_of_storage(graph):
    for module in ("obook.book.keys", "obook.book.rules"):
        assert not {d for d in graph[module] if d.startswith("obook.store")}, module


def test_the_checks_see_the_whole_project(graph):
    """A guard for the guard: the graph holds the modules and edges the checks above rely on."""
    assert {"obook.go.board", "obook.search.mcts", "obook.cli", "api.app", "workers.tasks"} <= set(graph)
    assert "obook.go.board" in graph["obook.go.position"]
    assert "obook.search.player" in graph["obook.search.players"]
    assert layer_of("obook.book.rules") < layer_of("obook.store.db") < layer_of("obook.book.selfplay")


def test_the_store_imports_nothing_from_the_book(graph):
    """Rows only in ``obook.store``: the book's rules and its back-up are ``obook.book``'s."""
    wrong = sorted((m, d) for m, deps in graph.items() if m.startswith("obook.store") for d in deps
                   if d.startswith("obook.book"))
    assert wrong == []


ALGORITHM_NAMES = {"mbm", "mvbm", "beta", "minimax"}
KIND_NAMES = {"SELF_PLAY", "SEARCH_VALUED", "SelfPlayKind", "MinimaxKind"}  # obook.book.kinds' kinds


def algorithm_tests(path: Path) -> list[int]:
    """Lines of ``path`` that test a book's algorithm or kind: a comparison with an ``.algorithm``
    attribute, an algorithm's name (a string, or the constants of ``obook.book.rules``), a kind
    (``book_kind(...)``, the kinds' objects, their names), and an ``isinstance`` of a kind."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
            if any(isinstance(part, ast.Name) and part.id in KIND_NAMES for part in ast.walk(node)):
                lines.append(node.lineno)
        if not isinstance(node, ast.Compare):
            continue
        for side in [node.left, *node.comparators]:
            for part in ast.walk(side):
                if ((isinstance(part, ast.Attribute) and part.attr == "algorithm")
                        or (isinstance(part, ast.Constant) and part.value in ALGORITHM_NAMES)
                        or (isinstance(part, ast.Name) and (part.id.lower() in ALGORITHM_NAMES or part.id in KIND_NAMES))
                        or (isinstance(part, ast.Constant) and part.value in ("self-play", "search-valued"))
                        or (isinstance(part, ast.Call) and getattr(part.func, "id", None) == "book_kind")):
                    lines.append(node.lineno)
    return sorted(set(lines))


def test_only_the_book_kinds_test_the_algorithm():
    """A book's algorithm changes behaviour through its kind (``obook.book.kinds``) only: the build,
    the grid, the service, the CLI, the settings' checks, the player and the export ask the kind;
    none tests the algorithm's name, nor which kind it is. (A search's own ``algorithm``, uct or
    flat, is another thing: ``obook.search`` is not checked.)"""
    allowed = {"obook.book.kinds", "obook.book.rules"}
    found = {}
    for name, path in module_files().items():
        if name in allowed or name.startswith(("obook.search", "obook.mines")):
            continue
        if lines := algorithm_tests(path):
            found[name] = lines
    assert found == {}


def hot_module_files() -> list[Path]:
    """The modules every simulation runs through: the tree search and the playouts."""
    return [ROOT / "obook/search/mcts.py", ROOT / "obook/search/kernel.py",
            *sorted((ROOT / "obook/playout").glob("*.py"))]


def test_the_hot_modules_import_no_experiment():
    """Experiments (``benchmarks/``, e.g. the book ceiling's ``opening_player``) stay off the hot path."""
    experiments = {"benchmarks"} | {path.stem for path in (ROOT / "benchmarks").glob("*.py")}
    assert "opening_player" in experiments
    found = []
    for path in hot_module_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            found += [(path.name, n) for n in names if n.split(".")[0] in experiments]
    assert len(hot_module_files()) >= 5 and found == []


def test_every_lazy_import_says_why():
    """An import inside a function only where an optional extra or the start-up time needs it, with
    its reason on its line (``# lazy: ...``) or, for a module that is lazy throughout (the CLI's
    commands, the warm-up's steps), in its docstring ("Imports are lazy" / "imports its modules")."""
    silent = []
    for name, path in module_files().items():
        text = path.read_text()
        tree = ast.parse(text)
        doc = ast.get_docstring(tree) or ""
        if "Imports are lazy" in doc or "imports its modules when it runs" in doc:
            continue
        lines = text.split("\n")
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Import, ast.ImportFrom)) and "# lazy:" not in lines[node.end_lineno - 1] \
                            and "# lazy:" not in lines[node.lineno - 1]:
                        silent.append(f"{name}:{node.lineno}")
    assert silent == []
