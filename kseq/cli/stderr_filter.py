"""The `kseq` command's stderr filter: TensorFlow's and absl's own lines dropped.

Run as the `kseq` command, the process's own stderr is filtered at the file-descriptor
level before TensorFlow loads: TensorFlow's and absl's lines (the absl pre-init warning,
oneDNN and CUDA notices, `WARNING:tensorflow:` lines), which no environment variable
silences, are dropped, every other line passes (`--verbose` keeps them all).
"""

import contextlib
import os
import re
import subprocess
import sys

# TensorFlow's and absl's own lines: absl's C++ log lines (`I0000 00:00:1796.27 22963 port.cc:153]
# ...`, severity I, W or E; F, a fatal error, is kept), absl's pre-init warning, the
# continuation of TensorFlow's CPU-feature notice, and TensorFlow's and absl's Python loggers.
TENSORFLOW_LINE = (rb"^(?:[IWE]\d{4} [\d:.]+\s+\d+ \S+:\d+\] "
                   rb"|WARNING: All log messages before absl::InitializeLog\(\) is called"
                   rb"|To enable the following instructions: .*rebuild TensorFlow"
                   rb"|(?:INFO|WARNING):(?:tensorflow|absl):)")
# The body lines of a multi-line absl entry, dropped only right after a dropped line: the
# coordination service's report of a lost worker (`/job:worker/replica:0/task:1`, "The tasks
# have crashed. ...", "The error could be from a previous operation. ..."), and gRPC's
# status of a peer that went away (`:UNKNOWN:Error received from peer  {grpc_status:14 ...}`,
# after "Additional GRPC error information ...") with the op it failed in (`[[{{node ...}}]]`).
CONTINUATION_LINE = (rb"^(?:/job:\w+/replica:\d+/task:\d+\s*$"
                     rb"|The tasks have crashed\. |The error could be from a previous operation\. "
                     rb"|Additional GRPC error information from remote target "
                     rb"|:\w+:Error received from peer "
                     rb"|\s*\[\[\{\{node [^}]*\}\}\]\])")
# The filter runs in a child process of its own (`python -I -S`: ~30 ms), so that a process
# that dies (a fatal TensorFlow error, a kill) still gets its last lines written out.
_FILTER = r"""
import re, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops kseq, which closes the pipe
noise, body = (re.compile(pattern.encode("latin-1")) for pattern in sys.argv[1:3])
dropping = False  # the previous line was dropped: an entry's body lines go with it
for line in sys.stdin.buffer:
    dropping = bool(noise.match(line) or (dropping and body.match(line)))
    if not dropping:
        sys.stderr.buffer.write(line)
        sys.stderr.buffer.flush()
"""


def is_tensorflow_line(line):
    """Whether `line` (str or bytes) is one of TensorFlow's or absl's own lines."""
    data = line.encode("utf-8", "replace") if isinstance(line, str) else line
    return re.match(TENSORFLOW_LINE, data) is not None


@contextlib.contextmanager
def tensorflow_lines_filtered():
    """Within the block, file descriptor 2 is a pipe into a child process that writes every
    line except TensorFlow's and absl's (`is_tensorflow_line`, and the body lines of a
    multi-line entry: `CONTINUATION_LINE` right after a dropped line) to the original stderr.
    Where that cannot be set up (no pipe, no interpreter), stderr is left as it is."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        child = subprocess.Popen([sys.executable, "-I", "-S", "-c", _FILTER,
                                  TENSORFLOW_LINE.decode("latin-1"),
                                  CONTINUATION_LINE.decode("latin-1")],
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=saved)
    except OSError:
        os.close(saved)
        yield
        return
    os.dup2(child.stdin.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)  # fd 2 lets go of the pipe: the child reads to its end and exits
        os.close(saved)
        child.stdin.close()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a grandchild still holds the pipe
            pass
