"""What setup.py says while CMake builds the extension (several minutes on 2 cores).

pip shows a build backend's output only with -v; without it a ``pip install .`` looked hung for minutes. So
setup.py writes a first line saying what is being built and how long it takes, then a line at every tenth of
Ninja's ``[k/n]`` steps, to the terminal pip runs in (``/dev/tty``, which pip does not capture) when it has
one, else to stderr (shown with -v). Not part of the installed package.
"""
import re
from typing import Optional, TextIO

_STEP = re.compile(r"^\[(\d+)/(\d+)\]")


class BuildProgress:
    """Turns the build's output lines into a few progress lines on `out`."""

    def __init__(self, out: TextIO, every_percent: int = 10):
        self.out = out
        self.every = every_percent
        self.next_percent = every_percent

    def say(self, text: str) -> None:
        self.out.write("libshard: " + text + "\n")
        self.out.flush()

    def start(self, cores: int) -> None:
        self.say("building the C++ extension and the shard program with CMake; this takes a few minutes on "
                 "%d core%s (pip -v shows each step)" % (cores, "" if cores == 1 else "s"))

    def line(self, text: str) -> None:
        """One line of the build's output: a Ninja step [k/n] past the next tenth is said."""
        m = _STEP.match(text)
        if not m or int(m.group(2)) == 0:
            return
        done, total = int(m.group(1)), int(m.group(2))
        percent = done * 100 // total
        if percent >= self.next_percent:
            self.say("[%d/%d] %d%% built" % (done, total, percent))
            self.next_percent = (percent // self.every + 1) * self.every

    def finish(self, seconds: float) -> None:
        self.say("C++ build done in %.0f s" % seconds)


def open_terminal() -> Optional[TextIO]:
    """The controlling terminal for writing, or None (no terminal: CI, a batch job)."""
    try:
        return open("/dev/tty", "w")
    except OSError:
        return None
