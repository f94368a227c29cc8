"""The preset catalog: shipped recipes (`*.json`), their trained weights, and their slices.

The JSON recipes, `.keras` weights and `slices/` sit in this package's folder,
so a plain `pip install` has them; `catalog` reads them (names, recipes,
checked weights), `rebuilt_backbones` refills frozen ImageNet backbones that
a preset leaves out, and `keras_archive` reads and rewrites `.keras` files.
"""

from kseq.presets.catalog import (canonical_name, has_weights, is_preset,  # noqa: F401
                                  load_preset_model, preset_recipe, presets, slice_pairs)
