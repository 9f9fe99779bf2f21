"""A GTP client that drives another engine (GNU Go, or obook itself) as a subprocess."""

from __future__ import annotations

import shlex
import subprocess

from obook.errors import ObookError


class GTPError(ObookError):
    """The engine answered ``? message`` or died."""


class GTPClient:
    """Send GTP commands, read ``= result`` / ``? error`` answers; use as a context manager."""

    def __init__(self, command: str | list[str], stderr=subprocess.DEVNULL):
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        self.command = argv
        try:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True, bufsize=1
            )
        except OSError as exc:
            raise GTPError(f"cannot start GTP engine {argv[0]!r}: {exc}") from None

    def send(self, command: str) -> str:
        """The answer of ``command`` without its ``=``; raise ``GTPError`` on ``?``."""
        if self.process.poll() is not None:
            raise GTPError(f"GTP engine {self.command[0]} has exited")
        self.process.stdin.write(command.strip() + "\n")
        self.process.stdin.flush()
        lines = []
        while True:
            line = self.process.stdout.readline()
            if line == "":
                raise GTPError(f"GTP engine {self.command[0]} closed its output during {command!r}")
            line = line.rstrip("\r\n")
            if line == "" and lines:
                break
            if line == "" and not lines:
                continue
            lines.append(line)
        head, rest = lines[0], lines[1:]
        if head.startswith("?"):
            raise GTPError(f"{self.command[0]}: {command!r} failed: {head[1:].strip()}")
        if not head.startswith("="):
            raise GTPError(f"{self.command[0]}: malformed answer to {command!r}: {head!r}")
        body = head[1:].lstrip("0123456789").strip()
        return "\n".join([body] + rest).strip() if rest else body

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.send("quit")
            except GTPError:
                pass
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> "GTPClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
