"""A Keras callback that reports validation BLEU each epoch and can keep the best weights."""

import time

import keras


class BleuCallback(keras.callbacks.Callback):
    """Translates a capped validation subset after each epoch and logs `val_bleu`.

    Args:
        pairs: `(source, reference)` string pairs.
        subset: at most this many pairs are translated (cost grows with it).
        beam_size: search used for the report (1 = greedy, cheapest).
        keep_best: restore the weights of the best epoch when training ends.

    The BLEU is added to the epoch logs as `val_bleu` (with `val_exact_match`
    and `bleu_seconds`, the cost of the report), so `History`, CSV loggers and
    checkpoints see it.
    """

    def __init__(self, pairs, subset=200, beam_size=1, keep_best=False, verbose=True):
        super().__init__()
        self.pairs = list(pairs)[:subset]
        self.beam_size = beam_size
        self.keep_best = keep_best
        self.verbose = verbose
        self.best_bleu = -1.0
        self.best_weights = None
        self.history = []

    def on_train_begin(self, logs=None):
        if not self.pairs and self.verbose:
            print("no validation pairs: validation BLEU is not reported", flush=True)

    def on_epoch_end(self, epoch, logs=None):
        if not self.pairs:
            return
        started = time.perf_counter()
        result = self.model.evaluate_bleu(self.pairs, beam_size=self.beam_size,
                                          print_signature=False)
        seconds = time.perf_counter() - started
        entry = {"epoch": epoch + 1, "val_bleu": result["bleu"], "val_chrf": result["chrf"],
                 "val_exact_match": result["exact_match"], "bleu_seconds": round(seconds, 2)}
        self.history.append(entry)
        if logs is not None:
            logs.update({k: v for k, v in entry.items() if k != "epoch"})
        if self.verbose:
            print(f"epoch {epoch + 1}: val BLEU {result['bleu']:.2f}, chrF {result['chrf']:.2f}, "
                  f"exact match {result['exact_match']:.3f} ({len(self.pairs)} sentences, "
                  f"{seconds:.1f} s)", flush=True)
        if result["bleu"] > self.best_bleu:
            self.best_bleu = result["bleu"]
            if self.keep_best:
                self.best_weights = self.model.get_weights()

    def on_train_end(self, logs=None):
        if self.keep_best and self.best_weights is not None:
            self.model.set_weights(self.best_weights)
