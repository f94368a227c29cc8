"""Hostile images (issue 50, items 1-4): each is a bad row, refused cheaply, never a crash.

The rows go through `decode_rows` in one child process (an animated WebP once
aborted it), each beside a good PNG, with its peak memory measured; the reasons
are checked in-process with `image_headers.refusal`, which decodes nothing.
The exported captioner's signature gets the same rows in
tests/export/test_captioner_export.py.
"""

import io

import numpy as np
import pytest
import tensorflow as tf

from hostile_images import (animated_webp, cross_gif, good_png, jpeg_bomb, long_gif,
                            run_rows_in_child, still_webp)
from kseq.data.pipeline.image_decoding import decode_rows
from kseq.data.pipeline.image_headers import (MAX_GIF_BYTES, declared_pixels, gif_frames,
                                              refusal)

EXTRA_MB = 300  # a refused row's bound on the peak; the bombs cost 1.3-2.3 GB before


def why(encoded, max_pixels=40_000_000, **bounds):
    return refusal(tf.constant(encoded), max_pixels, **bounds).numpy().decode()


@pytest.fixture(scope="module")
def decoded_in_child(tmp_path_factory):
    rows = {"animated_webp": animated_webp(), "still_webp": still_webp(),
            "cross_gif": cross_gif(), "jpeg_bomb": jpeg_bomb(), "long_gif": long_gif()}
    answers = run_rows_in_child(tmp_path_factory.mktemp("hostile"), rows)
    for name in rows:  # the good PNG beside each row always decodes
        assert answers[name]["valid"][1] is True, (name, answers[name])
    return answers


@pytest.mark.slow
def test_an_animated_webp_is_a_bad_row_not_a_crash(decoded_in_child):
    assert decoded_in_child["animated_webp"]["valid"] == [False, True]
    assert decoded_in_child["still_webp"]["valid"] == [True, True]  # a still WebP decodes
    webp = animated_webp()
    assert webp[12:16] == b"VP8X" and webp[20] & 0x02  # the flag libwebp reads
    assert why(webp) == "an animated WebP"
    unflagged = bytearray(webp)
    unflagged[20] &= ~0x02  # its ANIM and ANMF chunks still say so
    assert why(bytes(unflagged)) == "an animated WebP"
    assert still_webp()[12:16] == b"VP8X" and why(still_webp()) == ""


@pytest.mark.slow
def test_gif_frames_of_different_shapes_are_bounded_by_their_canvas(decoded_in_child):
    answer = decoded_in_child["cross_gif"]
    assert answer["valid"] == [False, True] and answer["extra_mb"] < EXTRA_MB, answer
    small = cross_gif(100)  # a 100 x 1 and a 1 x 100 frame behind a 1 x 1 screen
    assert [int(value) for value in gif_frames(tf.constant(small))] == [200, 100, 100]
    assert int(declared_pixels(tf.constant(small))) == 100 * 100  # the canvas, not 200
    assert why(small, max_pixels=10_000) == "" and why(small, 9_999) == "over max_pixels"
    assert why(cross_gif()) == "over max_pixels"


def _white_jpeg(side, **options):
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.full((side, side), 255, np.uint8)).save(buffer, "JPEG", **options)
    return buffer.getvalue()


@pytest.mark.slow
def test_a_jpeg_shorter_than_its_frame_is_a_bad_row(decoded_in_child):
    answer = decoded_in_child["jpeg_bomb"]
    assert answer["valid"] == [False, True] and answer["extra_mb"] < EXTRA_MB, answer
    bomb = jpeg_bomb()
    assert len(bomb) < 400 and bomb.endswith(b"\xff\xd9")  # complete: only its size tells
    assert why(bomb) == "a JPEG shorter than its frame"
    # The most compressible JPEGs libjpeg writes (a white page, optimised Huffman
    # tables: 2 bits per 8 x 8 block; progressive) hold at least twice the floor.
    for options in ({"optimize": True}, {"progressive": True, "optimize": True}, {}):
        white = _white_jpeg(1024, **options)
        assert len(white) >= 2 * 1024 * 1024 // 512 and why(white) == "", options


@pytest.mark.slow
def test_a_long_gif_is_refused_before_its_blocks_are_walked(decoded_in_child):
    answer = decoded_in_child["long_gif"]  # 40 MB: +2 GB and 9.8 s before
    assert answer["valid"] == [False, True], answer
    assert answer["seconds"] < 2 and answer["extra_mb"] < EXTRA_MB, answer
    assert why(long_gif(3)) == "a GIF over MAX_GIF_BYTES" and MAX_GIF_BYTES < 3 << 20
    png, small = good_png(), cross_gif(100)
    assert why(png, max_bytes=len(png) - 1) == "over max_bytes"  # before anything else
    # Both bounds reach the decoder (one trace): the canvas exactly at max_pixels
    # decodes, a row one byte over max_bytes does not.
    longest = max(len(png), len(small))
    _, valid = decode_rows([png, small, b"GIF89a" + bytes(longest - 5)], (8, 8),
                           max_pixels=10_000, max_bytes=longest)
    assert valid.numpy().tolist() == [True, True, False]
