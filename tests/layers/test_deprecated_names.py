"""One method name per role across layers; the old names still work and warn."""

import numpy as np
import pytest

import kseq

MEMORY = np.ones((2, 5, 8), "float32")


@pytest.mark.parametrize("make,old,new,args", [
    (lambda: kseq.layers.TransformerDecoderBlock(2, 16), "precompute_memory", "project_memory",
     (MEMORY,)),
    (lambda: kseq.layers.TransformerDecoderBlock(2, 16), "initial_cache", "initial_state",
     (2, 4)),
    (lambda: kseq.layers.MultiHeadSelfAttention(2, 4), "initial_cache", "initial_state", (2, 4)),
    (lambda: kseq.layers.AttentionDecoder(8), "precompute_memory", "project_memory", (MEMORY,)),
    (lambda: kseq.layers.ConvDecoderBlock(8, 4), "initial_window", "initial_state", (2,)),
    (lambda: kseq.layers.GatedConvolution(8), "initial_window", "initial_state", (2, 8)),
])
def test_old_names_forward_to_the_new_ones_with_a_warning(make, old, new, args):
    layer = make()
    if isinstance(layer, (kseq.layers.TransformerDecoderBlock, kseq.layers.AttentionDecoder)):
        layer.build((None, 3, 8), MEMORY.shape)  # their sublayers exist once built
    expected = getattr(layer, new)(*args)
    with pytest.warns(DeprecationWarning, match=f"`{old}` is deprecated: use `{new}`"):
        got = getattr(layer, old)(*args)
    flat = lambda x: [np.asarray(v) for v in (x.values() if isinstance(x, dict) else [x])]
    for a, b in zip(flat(got), flat(expected)):
        np.testing.assert_allclose(a, b)
