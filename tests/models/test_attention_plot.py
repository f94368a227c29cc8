import numpy as np
import pytest

from kseq.models.translator.attention_plot import attention_matrix
from translator_fixtures import PAIRS


@pytest.mark.slow
def test_plot_attention_writes_png_and_rows_are_distributions(overfit_translator, tmp_path):
    path = tmp_path / "alignment.png"
    weights = overfit_translator.plot_attention(PAIRS[0][0], str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    source, target, matrix = attention_matrix(overfit_translator, PAIRS[0][0])
    np.testing.assert_allclose(matrix, weights)
    assert matrix.shape == (len(target), len(source))
    np.testing.assert_allclose(matrix.sum(-1), 1.0, atol=1e-5)
    assert "".join(target).replace("</s>", "")

