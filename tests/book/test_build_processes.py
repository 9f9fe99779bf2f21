"""How the embedded build starts its workers (``obook.book.build.process_context``): forked on Linux
from a process without other threads, spawned otherwise; both finish the build, nothing counted
twice."""

from __future__ import annotations

import sys
import threading

import pytest

from obook.book.build import BuildPlan, build, process_context
from obook.book.library import BookSettings, ensure_book, open_book_store
from obook.book.verification import verify
from tests.book.test_book_cli import counts

RANDOM_GAMES = BookSettings(size=5, algorithm="mvbm", search="algorithm=random", seconds_per_move=0.0, depth=10)


def build_in_this_process(url: str, target: int) -> None:
    store = open_book_store(url, create=True)
    book = ensure_book(store, "p", RANDOM_GAMES)
    build(BuildPlan(url=url, book=book.name, target=target, workers=2))
    assert counts(url, "p") == {"finished": target}  # read through a fresh store (counts forgets the others)
    assert verify(open_book_store(url), book).clean


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is the Linux path")
def test_a_process_running_another_thread_spawns_the_workers_and_the_build_completes(tmp_path):
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        assert process_context().get_start_method() == "spawn"  # a lock the thread holds would stay held in a fork
        build_in_this_process(f"sqlite:///{tmp_path / 'spawned.db'}", target=3)
    finally:
        stop.set()
        other.join()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is the Linux path")
def test_a_single_threaded_process_forks_the_workers_and_the_build_completes(tmp_path):
    if threading.active_count() > 1:
        pytest.skip("this test process runs other threads (a plugin's): the build spawns here")
    assert process_context().get_start_method() == "fork"
    build_in_this_process(f"sqlite:///{tmp_path / 'forked.db'}", target=3)
