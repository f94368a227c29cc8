"""`kseq.training.progress.Progress` (issue 49, item 6), driven by hand without training:
a log file gets one plain line per epoch, a terminal a bar that redraws in place, and
an epoch a callback stopped says where it stopped. (A real run's lines, through
`kseq train`, are checked in `test_training_interruption.py`.)
"""

import types

import keras

from kseq.training.progress import Progress, duration_text, metrics_text

LOGS = {"loss": 1.5, "masked_accuracy": 0.25, "val_bleu": 12.345, "val_chrf": 30.0,
        "val_exact_match": 0.125, "bleu_seconds": 0.5}


def drive(progress, epochs, steps_per_epoch, stop_at=None):
    """Calls the callback as two `fit` epochs would, the step counter advancing."""
    model = types.SimpleNamespace(optimizer=types.SimpleNamespace(
        iterations=keras.Variable(0)), stop_training=False)
    progress.set_model(model)
    progress.on_train_begin()
    for epoch in range(epochs):
        progress.on_epoch_begin(epoch)
        for batch in range(steps_per_epoch):
            model.optimizer.iterations.assign_add(1)
            progress.on_train_batch_end(batch, {"loss": 1.5})
            if model.optimizer.iterations.numpy() == stop_at:
                model.stop_training = True
                break
        progress.on_epoch_end(epoch, dict(LOGS))
        if model.stop_training:
            break
    progress.close()


def test_a_log_file_gets_one_plain_line_per_epoch(capsys):
    drive(Progress(steps_per_epoch=4, target_epochs=3, live=False), epochs=3, steps_per_epoch=4,
          stop_at=10)
    out = capsys.readouterr().out
    assert "\r" not in out and "\x1b" not in out
    first, second, third = out.splitlines()
    assert first.startswith("epoch 1/3: loss 1.5000, accuracy 0.2500; validation BLEU 12.35, "
                            "chrF 30.00, exact match 0.1250 (0.5 s); 0:00, about 0:00 left")
    assert second.startswith("epoch 2/3: ")
    # A callback (the --minutes budget) stopped the third epoch: no jump to its end.
    assert third.startswith("epoch 3/3 (stopped at batch 2 of 4): loss 1.5000")
    assert "left" not in third


def test_a_terminal_gets_a_bar_redrawn_in_place_and_a_line_per_epoch(capsys):
    drive(Progress(steps_per_epoch=4, target_epochs=2, live=True, redraw_seconds=0.0),
          epochs=2, steps_per_epoch=4)
    out = capsys.readouterr().out
    assert "\x1b" not in out  # no escape sequence even here: `\r` and padding
    lines = out.split("\n")
    assert lines[-1] == "" and len(lines) == 3  # one finished line per epoch
    for epoch, line in enumerate(lines[:2], 1):
        *bars, summary = line.split("\r")[1:]
        assert bars[0].startswith(f"epoch {epoch}/2 [#####               ] 1/4 loss 1.5000")
        assert bars[-1].startswith(f"epoch {epoch}/2 [####################] 4/4")
        assert summary.startswith(f"epoch {epoch}/2: loss 1.5000") and len(summary) >= len(
            bars[-1].rstrip())  # padded over the bar's rest


def test_metric_names_and_durations():
    assert metrics_text({"epoch": 3, "val_accuracy": 0.5, "validation_seconds": 2.0}) == \
        "validation accuracy 0.5000 (2.0 s)"
    assert metrics_text({"loss": 2.0, "token_accuracy": 0.75}) == \
        "loss 2.0000, token accuracy 0.7500"
    assert (duration_text(59.6), duration_text(3725)) == ("1:00", "1:02:05")
