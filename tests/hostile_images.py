"""Hostile image rows (issue 50), made here with Pillow and `struct`, and a child process
that decodes them (some once aborted the process) and reports each row's peak memory.

Each builder returns a few hundred bytes that once crashed TensorFlow or made it
allocate gigabytes; `run_rows_in_child` sends each beside a good PNG through
`decode_rows` or an exported model's `serving_default`, in a fresh process.
"""

import io
import json
import os
import struct
import subprocess
import sys

import numpy as np

from fresh_process import ENV


def _pillow(array, fmt, **options):
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, fmt, **options)
    return buffer.getvalue()


def animated_webp():
    """A 2-frame 32 x 32 animated WebP (~190 bytes): it aborted TF 2.21's decoder."""
    from PIL import Image

    frames = [Image.fromarray(np.full((32, 32, 3), value, np.uint8)) for value in (0, 255)]
    buffer = io.BytesIO()
    frames[0].save(buffer, "WEBP", save_all=True, append_images=frames[1:])
    return buffer.getvalue()


def still_webp():
    """A still, lossy 32 x 32 WebP with alpha: `VP8X` (alpha flag), `ALPH`, `VP8 `."""
    pixels = np.full((32, 32, 4), 200, np.uint8)
    pixels[..., 3] = 128
    return _pillow(pixels, "WEBP")


def good_png():
    return _pillow(np.full((8, 8, 3), 90, np.uint8), "PNG")


def _gif_parts(gif):
    """`(header with its colour table, first image block)` of a GIF written by Pillow."""
    table = 3 << ((gif[10] & 7) + 1) if gif[10] & 0x80 else 0
    position = 13 + table
    while gif[position] == 0x21:  # extensions: introducer, label, sub-blocks
        position += 2
        while gif[position]:
            position += gif[position] + 1
        position += 1
    start, local = position, gif[position + 9]
    position += 10 + (3 << ((local & 7) + 1) if local & 0x80 else 0) + 1  # + LZW code size
    while gif[position]:
        position += gif[position] + 1
    return gif[:13 + table], gif[start:position + 1]


def cross_gif(side=8000):
    """A GIF with a 1 x 1 screen, a `side` x 1 frame and a 1 x `side` frame (340 bytes at
    8000): TensorFlow decodes it onto a `side` x `side` canvas (3.2 GB at 8000)."""
    header, wide = _gif_parts(_pillow(np.full((1, side), 200, np.uint8), "GIF"))
    _, tall = _gif_parts(_pillow(np.full((side, 1), 200, np.uint8), "GIF"))
    header = bytearray(header)
    header[6:10] = struct.pack("<HH", 1, 1)
    return bytes(header) + wide + tall + b"\x3b"


def jpeg_bomb(side=6000):
    """A 16 x 16 JPEG (~330 bytes) whose frame header says `side` x `side`: libjpeg warns
    "premature end of data segment" and decodes 36 megapixels of grey at 6000."""
    data = bytearray(_pillow(np.full((16, 16), 128, np.uint8), "JPEG", quality=50))
    frame = data.find(b"\xff\xc0")  # SOF0: length (2), precision (1), height, width
    data[frame + 5: frame + 9] = struct.pack(">HH", side, side)
    return bytes(data)


def long_gif(megabytes=40):
    """`GIF89a` and zeros: walking its blocks once cost +2 GB and 9.8 s at 40 MB."""
    return b"GIF89a" + bytes(megabytes << 20)


# The child in parts: `ROWS` (after `HEAD`'s imports) decodes the rows and prints one JSON
# object; `run_exports_and_rows_in_child` runs it after `testing.EXPORT_REQUESTS`.
HEAD = r"""
import base64, json, os, resource, sys, time
import tensorflow as tf
"""
ROWS = r"""
folder, export_dir = sys.argv[1], sys.argv[2]
names = json.loads(sys.argv[3])
good = open(os.path.join(folder, "good.bin"), "rb").read()
if export_dir:
    import tensorflow_text  # registers the tokenizer ops, as TF Serving links them
    served = tf.saved_model.load(export_dir).signatures["serving_default"]
    decode = lambda rows: served(image_bytes=rows)["valid"]
else:
    from kseq.data.pipeline.image_decoding import decode_rows
    decode = lambda rows: decode_rows(rows, (32, 32))[1]

def peak_mb():  # VmHWM: reset per row below where Linux allows it
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

decode(tf.constant([good]))  # traced (or warmed) once, outside the measurements
answers = {"kseq_loaded": "kseq" in sys.modules}
for name in names:
    row = tf.constant([open(os.path.join(folder, name + ".bin"), "rb").read(), good])
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")  # the peak starts again from here
    except OSError:
        pass
    before, start = peak_mb(), time.perf_counter()
    valid = decode(row).numpy().tolist()
    answers[name] = {"valid": valid, "seconds": time.perf_counter() - start,
                     "extra_mb": peak_mb() - before}
print(json.dumps(answers), flush=True)
"""
CHILD = HEAD + ROWS + r"""os._exit(0)  # all is printed: TensorFlow's interpreter teardown checks nothing
"""


def run_rows_in_child(folder, rows, export_dir=None, timeout=300):
    """Each of `rows` (`{name: bytes}`) beside a good PNG, decoded in a fresh process.

    Returns `{name: {"valid": [row, good PNG], "seconds", "extra_mb"}}` and `"kseq_loaded"`.
    `extra_mb` is the peak resident memory above what the process held before that row:
    memory an earlier costly row left resident hides a later row's (measured: a 2.3 GB
    GIF before a 1.3 GB JPEG shows the JPEG at +0 MB), so it bounds a row only when the
    rows before it were cheap too. A crash of the child (an abort inside a decoder)
    fails the caller.
    """
    _write_rows(folder, rows)
    done = subprocess.run([sys.executable, "-c", CHILD, str(folder), export_dir or "",
                           json.dumps(list(rows))], env=ENV, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def _write_rows(folder, rows):
    """The good PNG and each of `rows` as a file of `folder`, where `ROWS` reads them."""
    with open(os.path.join(folder, "good.bin"), "wb") as handle:
        handle.write(good_png())
    for name, data in rows.items():
        with open(os.path.join(folder, name + ".bin"), "wb") as handle:
            handle.write(data)


def run_exports_and_rows_in_child(exports, folder, rows, export_dir, loop=False, failing=(),
                                  timeout=600):
    """`testing.run_export_tests(exports, loop, failing)` and then `run_rows_in_child(folder,
    rows, export_dir)` in one fresh process: one TensorFlow start (~11 s) instead of two.

    The requests are answered first and printed (a JSON list), then the rows are decoded
    as `run_rows_in_child` decodes them (a JSON object), so a row that crashes the child
    (an abort inside a decoder) fails the rows' answer, not the requests'. The requests
    (a few small images) run before the rows; each row's `extra_mb` counts the peak above
    the level before that row, as in `run_rows_in_child`.

    Returns `(results, rows_answers)`: `results` as `run_export_tests` returns them, and
    `rows_answers()`, which returns what `run_rows_in_child` would (and fails as it does
    when the child did not exit cleanly).
    """
    from testing import CHILD_EXIT, EXPORT_REQUESTS, export_answers, export_payload

    payload = export_payload(exports, loop)
    _write_rows(folder, rows)
    done = subprocess.run([sys.executable, "-c", EXPORT_REQUESTS + HEAD + ROWS + CHILD_EXIT,
                           str(folder), export_dir, json.dumps(list(rows))], input=payload,
                          env=ENV, capture_output=True, text=True, timeout=timeout)
    lines = done.stdout.strip().splitlines()
    requests_line = [line for line in lines if line.startswith("[")]
    assert requests_line, f"exit {done.returncode}: {done.stderr[-3000:]}"
    results = export_answers(exports, requests_line[-1], failing)

    def rows_answers():
        assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
        return json.loads([line for line in lines if line.startswith("{")][-1])

    return results, rows_answers
