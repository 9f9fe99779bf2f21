"""The GTP protocol on its own (no engine, no search): command lines, responses, the session loop."""

import io
import threading

import pytest

from obook.errors import ObookError
from obook.gtp.protocol import (
    GTPCommandError,
    GTPProtocol,
    Streamed,
    format_header,
    format_response,
    parse_command_line,
)


@pytest.mark.parametrize("line, parsed", [
    ("name", ("", "name", [])),
    ("name\n", ("", "name", [])),
    ("name\r\n", ("", "name", [])),
    ("12 play b E5\r\n", ("12", "play", ["b", "E5"])),
    ("  7   play\tw\t\tC3  ", ("7", "play", ["w", "C3"])),
    ("play b e5 # a comment", ("", "play", ["b", "e5"])),
    ("3 genmove b#comment", ("3", "genmove", ["b"])),
    ("\x01na\x7fme\x1b", ("", "name", [])),
    ("42", ("42", None, [])),
    ("42 # only an id", ("42", None, [])),
    ("-1 name", ("", "-1", ["name"])),  # an id is a non-negative integer: otherwise it is the command
    ("1.5 name", ("", "1.5", ["name"])),
    ("PLAY B E5", ("", "PLAY", ["B", "E5"])),
])
def test_command_lines(line, parsed):
    assert parse_command_line(line) == parsed


@pytest.mark.parametrize("line", ["", "\n", "\r\n", "   \t  ", "# a comment", "   # indented comment\r\n", "\x01\x02"])
def test_blank_and_comment_lines_are_not_commands(line):
    assert parse_command_line(line) is None


def test_responses():
    assert format_response("", "") == "=\n\n"
    assert format_response("5", "") == "=5\n\n"
    assert format_response("5", "E5") == "=5 E5\n\n"
    assert format_response("", "oops", error=True) == "? oops\n\n"
    assert format_response("9", "oops", error=True) == "?9 oops\n\n"
    assert format_response("", "a\n\nb\n") == "= a\nb\n\n"  # no blank line inside: it would end the answer
    assert format_response("2", "\nrow 1\r\nrow 2") == "=2 \nrow 1\nrow 2\n\n"  # a board starts on its own line
    assert format_header("8") == "=8\n"


class Echo(GTPProtocol):
    """A session with a few commands that exercise every kind of answer."""

    def __init__(self):
        super().__init__(io.StringIO())
        self.closed = 0
        self.interrupted: list[bool] = []
        self.commands = {
            "echo": lambda args: " ".join(args),
            "lines": lambda args: "\n".join(args),
            "refuse": self.refuse,
            "crash": lambda args: 1 / 0,
            "stream": self.stream,
            "stream_then_fail": self.stream_then_fail,
            "interrupted": lambda args: str(self._interrupt.is_set()).lower(),
            "quit": self.quit,
        }

    def refuse(self, args):
        raise GTPCommandError("not today")

    def stream(self, args):
        self._stream(format_header(self._ident))
        for word in args:
            self._stream(f"info {word}\n")
        return Streamed("\n")

    def stream_then_fail(self, args):
        self._stream(format_header(self._ident))
        self._stream("info one\n")
        raise ObookError("gone wrong")

    def quit(self, args):
        self.quit_requested = True
        return ""

    def close(self):
        self.closed += 1


def test_handle_answers_every_kind_of_command():
    session = Echo()
    assert session.handle("1 echo a b") == "=1 a b\n\n"
    assert session.handle("ECHO x") == "= x\n\n"  # a command name in capitals falls back to lower case
    assert session.handle("lines a b") == "= a\nb\n\n"
    assert session.handle("2 refuse") == "?2 not today\n\n"
    assert session.handle("3 fly") == "?3 unknown command: fly\n\n"
    assert session.handle("4") == "?4 missing command\n\n"
    assert session.handle("# nothing") == ""
    assert session.handle("5 crash") == "?5 internal error: ZeroDivisionError: division by zero\n\n"
    assert "ZeroDivisionError" in session.log.getvalue()  # the traceback goes to the log
    assert session.handle("6 stream x y") == "=6\ninfo x\ninfo y\n\n"
    assert session.handle("7 stream_then_fail") == "=7\ninfo one\n\n"  # a begun answer is ended, not replaced
    assert "stream_then_fail: gone wrong" in session.log.getvalue()
    assert session.handle("8 echo after") == "=8 after\n\n"


def test_run_answers_in_order_until_quit_and_closes_once():
    session = Echo()
    out = io.StringIO()
    session.run(["1 echo a\r\n", "\n", "# comment\n", "2 stream s\n", "3 quit\n", "4 echo never\n"], out)
    assert out.getvalue() == "=1 a\n\n=2\ninfo s\n\n=3\n\n"
    assert session.closed == 1


def test_run_ends_at_the_end_of_input():
    session = Echo()
    out = io.StringIO()
    session.run(iter(["echo last"]), out)
    assert out.getvalue() == "= last\n\n" and session.closed == 1 and not session.quit_requested


def test_an_interrupt_line_is_not_a_command_and_reaches_the_command_running():
    session = Echo()
    out = io.StringIO()
    running = threading.Event()
    release = threading.Event()

    def wait(args):
        running.set()
        release.wait(10)  # set by the input after the interrupt line was read
        return str(session._interrupt.is_set()).lower()

    session.commands["wait"] = wait

    def lines():
        yield "1 wait\n"
        running.wait(10)
        yield "# interrupt\n"
        release.set()
        yield "2 interrupted\n"

    session.run(lines(), out)
    assert out.getvalue() == "=1 true\n\n=2 false\n\n"  # the interrupt was for command 1 only


def test_an_input_error_ends_the_session_with_a_message():
    def lines():
        yield "1 echo ok\n"
        raise OSError("the pipe broke")

    session = Echo()
    out = io.StringIO()
    session.run(lines(), out)
    assert out.getvalue() == "=1 ok\n\n"
    assert "input error: the pipe broke" in session.log.getvalue() and session.closed == 1
