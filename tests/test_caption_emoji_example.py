"""examples/caption_emoji.py, reduced: the real emoji builder (Debian's font, cached per
machine), the frozen ImageNet Lite0 grid, a tiny decoder trained for seconds, the PNG grid."""

import os
import sys

import pytest

from testing import warnings_as_errors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _no_warnings():
    """The example runs without a warning (but named third-party deprecations; `testing`)."""
    with warnings_as_errors():
        yield


def _example():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import caption_emoji
    finally:
        sys.path.pop(0)
    return caption_emoji


@pytest.mark.slow  # ~20 s with the emoji set and the Lite0 weights cached
def test_caption_emoji_example_runs_tiny(tmp_path):
    from PIL import Image

    model, result = _example().main(tiny=True, output=str(tmp_path))
    assert len(result["hypotheses"]) == len(result["references"]) == 8
    assert all(isinstance(caption, str) for caption in result["hypotheses"])
    assert set(result) >= {"bleu", "chrf", "cider_d", "exact_match", "chrf_signature"}
    assert model.encoder.backbone.trainable is False  # the frozen ImageNet backbone
    with Image.open(result["grid"]) as grid:  # 2 rows x 4 columns of emoji with captions
        assert grid.width > 600 and grid.height > 300
    assert os.path.isfile(tmp_path / "run" / "model.keras")
