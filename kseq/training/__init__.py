"""The training run behind `kseq train`: data, model, checkpoints, resume, curves.

`train(recipe, output_dir, ...)` is the entry point; `load_trained(path)` reads
what it wrote (or a preset, or a `.keras` file); `load_data(recipe)` gives the
recipe's `{"train", "valid", "test"}` splits.
"""

from kseq.training.run import load_data, load_trained, split_pairs, train  # noqa: F401
