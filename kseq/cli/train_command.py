"""`kseq train`: train (or resume) a model from a recipe, with the command's overrides and
a note on where a `--minutes` budget stopped it."""

import contextlib
import os

from kseq.cli.path_checks import check_data_argument
from kseq.cli.results import _note
from kseq.cli.task_loading import _import_every_room, _looks_like_a_name, _unknown_name
from kseq.errors import KseqError


def _training_overrides(args):
    """`--set KEY=VALUE` (in order), then `--batch-size`, `--learning-rate` and `--seed`, as
    one recipe override; `train` merges it, checks it like the recipe and records the merged
    recipe in `recipe.json`."""
    from kseq.models.recipes import merge

    training = {}
    if args.batch_size is not None:  # a batch size replaces the recipe's token budget
        training.update(batch_size=args.batch_size, token_budget=None)
    if args.learning_rate is not None:
        training["peak_learning_rate"] = args.learning_rate
    if args.seed is not None:
        training["seed"] = args.seed
    fine_tuning = {key: value for key, value in (
        ("freeze", args.freeze), ("keep_original", args.keep_original),
        ("extend_vocabulary", args.extend_vocabulary)) if value is not None}
    overrides = merge({}, *(args.set or []), {"training": training} if training else {},
                      {"fine_tuning": fine_tuning} if fine_tuning else {})
    return overrides or None


def _stop_report():
    """A Keras callback noting where training stopped when a callback (the `--minutes`
    budget) ended it early: the epoch (0-based), the optimizer step and the target epoch."""
    import keras

    class StopReport(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.epoch, self.stopped = 0, None

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

        def on_train_end(self, logs=None):
            if self.model.stop_training:
                self.stopped = (self.epoch, int(self.model.optimizer.iterations.numpy()),
                                self.params.get("epochs"))

    return StopReport()


def _budget_note(args, stopped):
    """Where the `--minutes` budget stopped the run, and the command that continues it (a
    finished run continues by finishing the cut epoch, then `--epochs` more). `target` is
    the stopped `fit` call's last epoch: the run's, unless that call only finished a resumed
    epoch (then it is that epoch, and the advice does not name a target)."""
    import shlex

    epoch, step, target = stopped
    more = (target or 0) - (epoch + 1)
    source = getattr(args, "init_from", None)
    source = f" --from {shlex.quote(source)}" if source else ""
    recipe = f" {shlex.quote(args.recipe)}" if args.recipe else ""
    command = f"kseq train{recipe}{source} --output {shlex.quote(args.output)}"
    if more >= 1:
        where = f"in epoch {epoch + 1} of {target} (step {step})"
        advice = f"to continue to epoch {target}: {command} --epochs {more}"
    else:
        where = f"in epoch {epoch + 1} (step {step})"
        advice = f"to finish epoch {epoch + 1} and train N more: {command} --epochs N"
    return f"the {args.minutes:g}-minute budget stopped training {where}; {advice}"


def _writes_the_run(args):
    """Whether this process saved the run: every run but a multi-worker one's non-chief tasks."""
    if args.strategy != "multi-worker":
        return True
    from kseq.training.distribution import check_multi_worker_environment, is_chief_task

    return is_chief_task(check_multi_worker_environment("multi-worker"))


def _check_fine_tuning_options(args):
    """`--from`'s options need it; a recipe is needed without it."""
    if args.init_from is None:
        for option, value in (("--freeze", args.freeze), ("--keep-original", args.keep_original),
                              ("--extend-vocabulary", args.extend_vocabulary)):
            if value is not None:
                raise KseqError(f"{option} applies to a fine-tuning run: add --from SOURCE. "
                                f"Received: {option} without --from")
        if args.recipe is None:
            raise KseqError("kseq train needs a recipe (a preset name or a recipe file), or "
                            "--from SOURCE to fine-tune. Received: neither")
    elif not os.path.exists(args.init_from):
        from kseq.presets.catalog import is_preset

        if not is_preset(args.init_from):
            if _looks_like_a_name(args.init_from):
                raise _unknown_name(args.init_from, "run folder, .keras file or preset")
            raise KseqError(f"No such model to fine-tune from. Received: --from "
                            f"{args.init_from}")


def _scratch_note(args):
    """A preset that ships weights, trained anew on the user's data: said in one line."""
    from kseq.presets.catalog import has_weights, is_preset

    if args.init_from is None and args.data and is_preset(args.recipe) and \
            has_weights(args.recipe) and not os.path.exists(os.path.join(args.output,
                                                                         "recipe.json")):
        _note(args, f"training the {args.recipe} recipe from scratch (a new vocabulary; its "
                    f"shipped weights are not used); to fine-tune them instead: kseq train "
                    f"--from {args.recipe} --data ... --output ...")


def _train(args):
    from kseq.presets.catalog import is_preset

    _check_fine_tuning_options(args)
    if args.recipe is not None and not os.path.isfile(args.recipe) and \
            not is_preset(args.recipe):
        if _looks_like_a_name(args.recipe):
            raise _unknown_name(args.recipe, "recipe file or preset")
        raise KseqError(f"No such recipe file. Received: {args.recipe}")
    check_data_argument(args.data)  # before TensorFlow loads: a missing file says so at once
    check_data_argument(args.valid, "--valid")
    _import_every_room()
    from kseq.training import train

    _scratch_note(args)
    report = _stop_report()
    with contextlib.ExitStack() as stack:
        if args.quiet:  # no progress and no "starting at step ..." line: the result below
            stack.enter_context(contextlib.redirect_stdout(
                stack.enter_context(open(os.devnull, "w", encoding="utf-8"))))
        model, splits, history = train(
            args.recipe, args.output, data_path=_data_argument(args.data), epochs=args.epochs,
            minutes=args.minutes, save_every_steps=args.save_every,
            overrides=_training_overrides(args), verbose=0 if args.quiet else 1,
            extra_callbacks=[report], strategy=args.strategy,
            precision=args.precision, jit_compile=args.jit_compile, columns=args.columns,
            valid_path=_data_argument(args.valid), init_from=args.init_from)
    if _writes_the_run(args):  # --quiet too: where the model is, and how good
        print(_result_line(args, model, history))
    if report.stopped is not None and args.minutes:
        _note(args, _budget_note(args, report.stopped))


def _result_line(args, model, history):
    """`saved PATH (N parameters)`, then the last epoch's validation scores, if any."""
    from kseq.training.progress import metrics_text

    line = f"saved {os.path.join(args.output, 'model.keras')} ({model.count_params():,} parameters)"
    if history:
        line += f"; epoch {history[-1]['epoch']}: {metrics_text(history[-1])}"
    return line


def _data_argument(data):
    """`--data`'s values: one path, glob or folder as a string; several as a list."""
    if data is None or len(data) > 1:
        return data
    return data[0]
