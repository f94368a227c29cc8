"""`ProgressLine`: lines done and lines per second on stderr while a stream is decoded.

When `kseq translate` (or `caption`, `classify`, `tag`) reads a stream and its results do
not go to a terminal (a pipe, a file, `--output FILE`), the terminal sees nothing else for
minutes; this says how far it is, at most once every `interval` seconds. Each report is a
plain line of its own, with no `\\r` and no escape codes, so a log file or a CI job keeps it
readable (and the `kseq` command's stderr is a pipe into its TensorFlow-line filter anyway,
`kseq.cli.stderr_filter`, which passes whole lines). A run shorter than `interval` prints
nothing at all.

Example:
>>> import io
>>> from kseq.cli.progress_line import ProgressLine
>>> ticks = iter([0.0, 2.0, 6.0, 8.0])
>>> err = io.StringIO()
>>> progress = ProgressLine("translated", stream=err, clock=lambda: next(ticks))
>>> progress.add(64)     # 2 s: too soon for a report
>>> progress.add(128)    # 6 s
>>> progress.finish()    # 8 s: the total, since a report was shown
>>> print(err.getvalue(), end="")
kseq: translated 192 lines (32 lines/s)
kseq: translated 192 lines in 8.0 s (24 lines/s)
"""

import sys
import time


class ProgressLine:
    """Counts lines done; reports them on `stream` every `interval` seconds.

    Args:
        verb: what was done to the lines, e.g. `"translated"`.
        interval: the fewest seconds between two reports (and before the first one).
        stream: where reports go (default: `sys.stderr` when the object is made).
        clock: seconds, monotonic (a test's fake clock).
    """

    def __init__(self, verb, interval=5.0, stream=None, clock=time.monotonic):
        self.verb = verb
        self.interval = interval
        self.stream = sys.stderr if stream is None else stream
        self.clock = clock
        self.started = self.last = clock()
        self.lines = 0
        self.reported = False

    def add(self, count):
        """Counts `count` more lines done; reports if `interval` seconds have passed."""
        self.lines += count
        now = self.clock()
        if now - self.last >= self.interval:
            self.last = now
            self._write(f"kseq: {self.verb} {self.lines:,} lines "
                        f"({self._rate(now):,.0f} lines/s)")

    def finish(self):
        """The total and the mean rate, if any report was shown (a short run stays silent)."""
        if not self.reported:
            return
        now = self.clock()
        self._write(f"kseq: {self.verb} {self.lines:,} lines in {now - self.started:.1f} s "
                    f"({self._rate(now):,.0f} lines/s)")

    def _rate(self, now):
        return self.lines / max(now - self.started, 1e-9)

    def _write(self, text):
        self.stream.write(text + "\n")
        self.stream.flush()
        self.reported = True
