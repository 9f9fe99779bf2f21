"""``obook warm-up`` and the compile announcements: the engine compiled ahead of use, with progress
on stderr, and a GTP engine that says it compiles and still answers the commands needing no search."""

import os
import subprocess
import sys

import pytest


def obook(*args, env=None, stdin=None, timeout=900):
    return subprocess.run([sys.executable, "-m", "obook.cli", *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=timeout)


def test_warm_up_reports_each_step_then_the_cache_is_warm(compiled_engine):
    done = obook("warm-up", "--policies", "light")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    steps = [line for line in lines if "the engine [" in line]
    assert [line.split("[")[1].split("]")[0] for line in steps] == ["1/3", "2/3", "3/3"]
    assert "uct, light playouts" in steps[1]
    assert "the engine is ready" in lines[-1]
    from obook.search.warmup import is_warm

    assert is_warm()


@pytest.mark.parametrize("args, wrong", [
    (["--policies", "light,nonsense"], "unknown policy 'nonsense'"),
    (["--policies", ","], "names no policy"),
    (["--algorithm", "nonsense"], "unknown algorithm 'nonsense'"),
])
def test_warm_up_refuses_unknown_policies_and_algorithms(args, wrong):
    done = obook("warm-up", *args)
    assert done.returncode == 2
    assert wrong in done.stderr
    assert "Traceback" not in done.stderr


def test_gtp_says_it_compiles_and_answers_administrative_commands(tmp_path):
    """With an empty cache the engine compiles in the background: the GTP session still answers
    protocol_version, name, boardsize, komi and play, and the log says what is going on."""
    env = dict(os.environ, OBOOK_NUMBA_CACHE=str(tmp_path / "cache"))
    done = obook("gtp", "--config", "policy=light", env=env,
                 stdin="protocol_version\nname\nboardsize 7\nkomi 6.5\nplay B D4\nquit\n")
    assert done.returncode == 0, done.stderr
    answers = [line for line in done.stdout.splitlines() if line.strip()]
    assert answers == ["= 2", "= obook", "=", "=", "=", "="]
    assert "not compiled yet" in done.stderr


def test_warm_up_compiles_only_what_the_algorithm_uses():
    from obook.search.warmup import steps

    assert [label for label, _ in steps(("heavy", "light"), "flat")] == [
        "the rules", "the search (flat, heavy playouts)", "the search (flat, light playouts)", "ownership (scoring)"]
    assert [label for label, _ in steps(("light",), "random")] == ["the rules", "ownership (scoring)"]


def test_gtp_with_a_warm_cache_does_not_announce_compiling(compiled_engine):
    done = obook("gtp", stdin="name\nquit\n")
    assert done.returncode == 0, done.stderr
    assert "compil" not in done.stderr
