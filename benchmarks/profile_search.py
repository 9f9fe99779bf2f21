"""Where a search's time goes, by function: ``perf`` over one MCTS search from the empty board.

    python benchmarks/profile_search.py [--seconds 10] [--config SPEC] [--size 9] [--top 15]

Numba's compiled code has no symbols that ``perf`` can see. This runs the search in a child process
that compiles the engine into an empty numba cache (a cached function is loaded as object code,
without the LLVM module that names its inner functions; the compile takes a minute or two), writes
``/tmp/perf-PID.map`` (the address of every function of every compiled library: how ``perf`` names
JIT code), and prints ``START``; ``perf record`` then samples the process for the search's time and
``perf report`` gives each function's share. Functions that LLVM inlined are counted in their caller
(``select_child`` in ``run_simulations``, the playout policy's rules in ``run_playout``).

Needs ``perf`` (Debian: ``linux-perf``) and permission to profile the child (root, or
``kernel.perf_event_paranoid`` at most 1). A figure from a machine running nothing else.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_perf_map() -> int:
    """Write ``/tmp/perf-<pid>.map`` for every function numba compiled in this process; returns
    how many. A function's size is the distance to the next one's address."""
    from numba.core.registry import CPUDispatcher

    names: dict[int, str] = {}
    for obj in gc.get_objects():
        if not isinstance(obj, CPUDispatcher):
            continue
        for cres in list(obj.overloads.values()):
            library = cres.library
            symbols = {cres.fndesc.llvm_func_name}
            module = getattr(library, "_final_module", None)
            if module is not None:
                symbols.update(fn.name for fn in module.functions if not fn.is_declaration)
            for symbol in symbols:
                try:
                    address = library.get_pointer_to_function(symbol)
                except Exception:  # noqa: BLE001 - a symbol the engine did not keep
                    continue
                if address:
                    names[address] = readable(symbol)
    addresses = sorted(names)
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as out:
        for i, address in enumerate(addresses):
            gap = addresses[i + 1] - address if i + 1 < len(addresses) else 4096
            out.write(f"{address:x} {min(gap, 1 << 20):x} {names[address]}\n")
    return len(addresses)


def readable(symbol: str) -> str:
    """``obook.search.selection.select_child`` from numba's mangled ``_ZN5obook6search9selection12select_childB4v..``."""
    if not symbol.startswith("_ZN"):
        return symbol
    parts, rest = [], symbol[3:]
    while rest and rest[0].isdigit():
        length = int(re.match(r"\d+", rest).group())
        digits = len(str(length))
        parts.append(rest[digits:digits + length])
        rest = rest[digits + length:]
    return ".".join(parts) or symbol


def child(spec: str, size: int, seconds: float) -> None:
    from obook.go.position import Position
    from obook.search.config import SearchConfig
    from obook.search.players import make_player

    config = SearchConfig.from_spec(spec, processes=1, seed=1, max_nodes=4_000_000)
    position = Position(size=size, komi=7.5)
    player = make_player(config)
    player.genmove(position, playouts=200)
    player.new_game()
    print("mapped", write_perf_map(), "functions", flush=True)
    print("START", flush=True)
    started = time.perf_counter()
    result = player.genmove(position, seconds=seconds)
    rate = result.playouts / (time.perf_counter() - started)
    print(f"{rate:,.0f} simulations/s, {result.nodes:,} nodes", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the search")
    parser.add_argument("--config", default="", help="search options besides the defaults")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--top", type=int, default=15, help="functions to list")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.config, args.size, args.seconds)
        return 0
    if shutil.which("perf") is None:
        print("profile_search: perf is not installed (Debian: apt-get install linux-perf)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, OBOOK_NUMBA_CACHE=os.path.join(work, "numba"))
        log = Path(work) / "child.log"
        with log.open("w") as out:
            proc = subprocess.Popen([sys.executable, __file__, "--child", "--config", args.config, "--size",
                                     str(args.size), "--seconds", str(args.seconds)],
                                    env=env, stdout=out, stderr=subprocess.STDOUT)
        perf_map = Path(f"/tmp/perf-{proc.pid}.map")
        try:
            while "START" not in log.read_text():
                if proc.poll() is not None:
                    print(log.read_text(), file=sys.stderr)
                    print("profile_search: the search process ended before its search began", file=sys.stderr)
                    return 1
                time.sleep(0.5)
            data = os.path.join(work, "perf.data")
            subprocess.run(["perf", "record", "-q", "-F", "999", "-o", data, "-p", str(proc.pid), "--", "sleep",
                            str(max(1.0, args.seconds - 1.0))], check=True, stdout=subprocess.DEVNULL)
            proc.wait()
            print(log.read_text().strip().splitlines()[-1])
            report = subprocess.run(["perf", "report", "-i", data, "--stdio", "--sort", "symbol"], check=True,
                                    capture_output=True, text=True).stdout
        finally:
            if proc.poll() is None:
                proc.kill()
            perf_map.unlink(missing_ok=True)
        rows = [line.split(None, 2) for line in report.splitlines() if line.strip() and not line.startswith("#")]
        for share, _, name in rows[:args.top]:
            print(f"{share:>8}  {name.split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
