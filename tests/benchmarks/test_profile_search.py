"""``benchmarks/profile_search.py``: the names it gives numba's functions in the perf map."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from profile_search import readable  # noqa: E402


def test_a_numba_symbol_reads_as_its_module_and_function():
    mangled = ("_ZN5obook6search9selection12select_childB4v108B36c8tJTIeFIjxB2IKSgI4CrvQCltYEAA_3d_3dE540Tree_"
               "28array_28int32_2c_201d")
    assert readable(mangled) == "obook.search.selection.select_child"
    assert readable("_ZN5obook7playout8policies11run_playoutB4v115B36c8t") == "obook.playout.policies.run_playout"


def test_other_symbols_are_kept_as_they_are():
    assert readable("cpython.obook.search.kernel.run_simulations") == "cpython.obook.search.kernel.run_simulations"
    assert readable("__ieee754_log_fma") == "__ieee754_log_fma"
