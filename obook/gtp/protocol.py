"""The Go Text Protocol itself (GTP 2): command lines in, responses out, whatever the commands are.

``GTPProtocol`` is the loop of one session: a thread reads the input, so that a streamed answer
(``lz-analyze``) can run until the next command arrives and GoGui's ``# interrupt`` line can cut a
search short (one read while no command is pending is stale, and ignored); every other line is
answered in order by the handler of the subclass's command table.
A command that fails with ``GTPCommandError`` (or any ``ObookError`` or ``ValueError``) answers
``? message``; an unexpected failure is logged to stderr with its traceback and answered
``? internal error: ...`` instead of ending the process.
"""

from __future__ import annotations

import queue
import re
import threading
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TextIO

from obook.errors import ObookError

INTERRUPT_LINE = "# interrupt"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class GTPCommandError(ObookError):
    """A command that fails: answered ``? message``."""


@dataclass
class Streamed:
    """A response whose first lines were already written; ``tail`` ends it."""

    tail: str


class GTPProtocol:
    """One GTP session's input, dispatch and output; a subclass fills ``commands`` (name to handler,
    each handler taking the arguments and returning the answer text or a ``Streamed`` tail) and may
    override ``close``, which runs when the session ends."""

    def __init__(self, log: TextIO):
        self.log = log
        self.quit_requested = False
        self.commands: dict[str, Callable[[list[str]], str | Streamed]] = {}
        self._inbox: queue.Queue | None = None
        self._interrupt = threading.Event()
        self._lock = threading.Lock()  # orders the reader's interrupts against the end of each command
        self._outstanding = 0  # lines read and not yet answered
        self._out: TextIO | None = None
        self._pending: list[str] = []
        self._streaming = False
        self._ident = ""

    def run(self, lines: Iterable[str], out: TextIO) -> None:
        """Answer every command line of ``lines`` on ``out`` until ``quit`` or the end of input."""
        self._out = out
        self._inbox = queue.Queue()
        reader = threading.Thread(target=self._read, args=(lines,), daemon=True, name="gtp-input")
        reader.start()
        try:
            while not self.quit_requested:
                line = self._inbox.get()
                if line is None:
                    break
                response = self.handle(line)
                if response:
                    out.write(response)
                    out.flush()
                with self._lock:
                    self._outstanding -= 1
                    self._interrupt.clear()  # an interrupt is for the command it arrived during
        finally:
            self._out = None
            self._inbox = None
            self.close()

    def close(self) -> None:
        """Release what the session holds; called once when ``run`` ends."""

    def _read(self, lines: Iterable[str]) -> None:
        try:
            for line in lines:
                with self._lock:
                    if line.strip() == INTERRUPT_LINE:
                        if self._outstanding:  # while nothing runs there is nothing to interrupt: a stale
                            self._interrupt.set()  # interrupt must not cut the next command short
                        continue
                    self._outstanding += 1
                self._inbox.put(line)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            print(f"obook gtp: input error: {exc}", file=self.log, flush=True)
        finally:
            self._inbox.put(None)

    def handle(self, line: str) -> str:
        """The complete response to one input line ('' for a blank or comment line)."""
        parsed = parse_command_line(line)
        if parsed is None:
            return ""
        ident, name, args = parsed
        self._pending = []
        self._streaming = False
        if name is None:
            return format_response(ident, "missing command", error=True)
        handler = self.commands.get(name) or self.commands.get(name.lower())
        if handler is None:
            return format_response(ident, f"unknown command: {name}", error=True)
        self._ident = ident
        try:
            result = handler(args)
        except (ObookError, ValueError) as exc:
            if self._streaming:  # the answer has begun: end it, and say why on stderr
                print(f"obook gtp: {name}: {exc}", file=self.log, flush=True)
                return "".join(self._pending) + "\n"
            return format_response(ident, str(exc) or "failed", error=True)
        except Exception as exc:  # a bug must not end the session
            traceback.print_exc(file=self.log)
            self.log.flush()
            if self._streaming:
                return "".join(self._pending) + "\n"
            return format_response(ident, f"internal error: {type(exc).__name__}: {exc}", error=True)
        if isinstance(result, Streamed):
            return "".join(self._pending) + result.tail
        return format_response(ident, result)

    def _stream(self, text: str) -> None:
        """Write part of a response now (live session) or keep it for ``handle``'s answer."""
        self._streaming = True
        if self._out is not None:
            self._out.write(text)
            self._out.flush()
        else:
            self._pending.append(text)

    def _input_waiting(self) -> bool:
        return self._inbox is None or not self._inbox.empty()


def parse_command_line(line: str) -> tuple[str, str | None, list[str]] | None:
    """(id, command, arguments) of a GTP input line, or None when it is blank or a comment.

    Control characters other than tab and newline are removed, tabs are spaces and everything after
    ``#`` is a comment (GTP 2, section 2.5)."""
    text = _CONTROL.sub("", line.replace("\t", " ").replace("\r", ""))
    text = text.split("#", 1)[0].strip()
    if not text:
        return None
    words = text.split()
    ident = ""
    if words[0].isdigit():
        ident = words.pop(0)
    if not words:
        return ident, None, []
    return ident, words[0], words[1:]


def format_header(ident: str) -> str:
    return f"={ident}\n"


def format_response(ident: str, text: str, error: bool = False) -> str:
    """``=id text`` or ``?id text`` and the blank line that ends a response; empty lines inside a
    multi-line answer are dropped so that they cannot end it early."""
    lines = text.replace("\r", "").split("\n")
    body = [lines[0]] + [line for line in lines[1:] if line.strip()]
    head = ("?" if error else "=") + ident
    first = body[0]
    return "\n".join([f"{head} {first}" if first or len(body) > 1 else head] + body[1:]) + "\n\n"
