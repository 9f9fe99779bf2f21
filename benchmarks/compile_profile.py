"""Where numba's compile time goes: run a piece of obook with an empty cache (or the one given) and
print, per dispatcher, its signatures and its compile time (inclusive of the callees it compiled,
and exclusive), plus the time in the LLVM lock.

    OBOOK_NUMBA_CACHE=$(mktemp -d) python benchmarks/compile_profile.py [--signatures] [--top N]

Run it from the checkout to profile (``PYTHONPATH=CHECKOUT`` for another one). Prints a table and one
JSON line with the totals.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict


def run(what: str) -> None:
    if what == "warm_up":
        from obook.book.selfplay import warm_up

        warm_up()
    else:
        raise SystemExit(f"unknown --what {what!r}")


def _short(numba_type) -> str:
    """A named tuple of arrays by its class name (``Board``), anything else as numba prints it."""
    cls = getattr(numba_type, "instance_class", None)
    return getattr(cls, "__name__", None) if cls is not None and hasattr(numba_type, "fields") else str(numba_type)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--what", default="warm_up")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--signatures", action="store_true", help="print the argument types of every dispatcher compiled more than once")
    args = parser.parse_args()

    import numba.core.event as ev

    class Recorder(ev.Listener):
        def __init__(self):
            self.stack = []  # [name, start, child_time, llvm_time]
            self.rows = defaultdict(lambda: {"sigs": 0, "inclusive": 0.0, "exclusive": 0.0, "types": []})
            self.llvm = 0.0
            self.llvm_start = None

        def on_start(self, event):
            if event.kind == "numba:compile":
                d = event.data["dispatcher"]
                name = f"{d.py_func.__module__}.{d.py_func.__qualname__}"
                self.stack.append([name, time.perf_counter(), 0.0])
                self.rows[name]["types"].append(", ".join(_short(t) for t in event.data["args"]))
            elif event.kind == "numba:llvm_lock":
                self.llvm_start = time.perf_counter()

        def on_end(self, event):
            if event.kind == "numba:compile":
                name, start, child = self.stack.pop()
                spent = time.perf_counter() - start
                row = self.rows[name]
                row["sigs"] += 1
                row["inclusive"] += spent
                row["exclusive"] += spent - child
                if self.stack:
                    self.stack[-1][2] += spent
            elif event.kind == "numba:llvm_lock" and self.llvm_start is not None:
                self.llvm += time.perf_counter() - self.llvm_start
                self.llvm_start = None

    rec = Recorder()
    t0 = time.perf_counter()
    with ev.install_listener("numba:compile", rec), ev.install_listener("numba:llvm_lock", rec):
        run(args.what)
    total = time.perf_counter() - t0
    rows = sorted(rec.rows.items(), key=lambda kv: -kv[1]["exclusive"])
    print(f"{'dispatcher':60s} {'sigs':>4s} {'excl s':>8s} {'incl s':>8s}")
    for name, row in rows[: args.top]:
        print(f"{name:60s} {row['sigs']:4d} {row['exclusive']:8.1f} {row['inclusive']:8.1f}")
        if args.signatures and row["sigs"] > 1:
            for types in row["types"]:
                print(f"    {types}")
    compile_total = sum(r["exclusive"] for r in rec.rows.values())
    print(json.dumps({"what": args.what, "wall_seconds": round(total, 1), "compile_seconds": round(compile_total, 1),
                      "llvm_lock_seconds": round(rec.llvm, 1), "dispatchers": len(rec.rows),
                      "signatures": sum(r["sigs"] for r in rec.rows.values())}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
