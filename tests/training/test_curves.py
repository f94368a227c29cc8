"""`TrainingCurves`: short epochs are drawn once at the end, long ones after each epoch."""

import os

from kseq.training.curves import TrainingCurves


def epochs(curves, count):
    curves.on_train_begin()
    for epoch in range(count):
        curves.on_epoch_end(epoch, {"loss": 3.0 - epoch, "val_bleu": 10.0 * epoch})
        yield os.path.exists(curves.path)
    curves.on_train_end()


def test_short_epochs_are_drawn_once_when_training_ends(tmp_path):
    curves = TrainingCurves(str(tmp_path / "curves.png"), redraw_seconds=3600)
    assert list(epochs(curves, 3)) == [False, False, False]
    assert os.path.getsize(curves.path) > 1000 and curves.drawn_rows == 3


def test_epochs_longer_than_the_redraw_interval_are_drawn_after_each(tmp_path):
    curves = TrainingCurves(str(tmp_path / "curves.png"), redraw_seconds=0)
    drawn = []
    for exists in epochs(curves, 2):
        drawn.append((exists, curves.drawn_rows))
    assert drawn == [(True, 1), (True, 2)]


def test_a_resumed_run_redraws_with_its_earlier_rows(tmp_path):
    earlier = [{"loss": 4.0}, {"loss": 3.5}]
    curves = TrainingCurves(str(tmp_path / "curves.png"), earlier, redraw_seconds=3600)
    curves.on_train_begin()
    curves.on_train_end()  # nothing new: nothing drawn
    assert not os.path.exists(curves.path)
    list(epochs(curves, 1))
    assert curves.drawn_rows == 3 and os.path.getsize(curves.path) > 1000
