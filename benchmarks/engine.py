"""Engine figures of issue 2: playouts per second for each policy, and start-up times.

Run by hand: ``python benchmarks/engine.py`` (or ``make bench``). Prints JSON lines."""

import subprocess
import sys

for policy in ("light", "atari50"):
    subprocess.run([sys.executable, "-m", "obook.cli", "bench", "playouts", "--size", "9", "--policy", policy,
                    "--seconds", "10", "--json"], check=True)
subprocess.run([sys.executable, "-m", "obook.cli", "bench", "startup", "--json"], check=True)
