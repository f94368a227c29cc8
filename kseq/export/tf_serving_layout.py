"""TF Serving's `<base>/<name>/<version>/` layout and its `<base>/models.config`.

`export_to_serving_layout` validates the name and version, builds the export
in a hidden staging folder inside `<base>/<name>` (`kseq.export.staging`),
renames it to its version folder when complete, and only then merges the
model's entry into `<base>/models.config` (other models' entries are kept). A
kill or an error at any point leaves every version folder complete and
`models.config` as it was or merged, never half written.

Versions: TF Serving reads every all-digit folder as a version, so every
all-digit entry counts as taken, complete or not; the next free version is
one past the highest. kseq's own exports can no longer leave an incomplete
version folder; one left by an older kseq or another tool is never deleted or
reused (a warning names it: TF Serving fails to load it, remove it by hand).

Example:
>>> from kseq.export.tf_serving_layout import check_version
>>> check_version("3"), check_version(None)
(3, None)
"""

import contextlib
import logging
import numbers
import os
import re

import tensorflow as tf

from kseq.errors import KseqError
from kseq.export.models_config import merge_models_config, read_models_config
from kseq.export.saved_model_export import build_saved_model, write_error
from kseq.export.staging import publish, staging_directory

logger = logging.getLogger("kseq")
MODELS_CONFIG = "models.config"
MAX_VERSION = 2**63 - 1  # TF Serving's versions are int64
_DIGITS = re.compile(r"[0-9]+")


def check_model_name(name):
    """`name` if it can be one folder name; otherwise a `KseqError`."""
    separators = {"/", os.sep, os.altsep} - {None}
    if (not isinstance(name, str) or name in ("", ".", "..") or "\0" in name
            or any(s in name for s in separators)):
        raise KseqError("The model name (the last part of --output) must be one folder name: "
                        "not empty, not '.' or '..', without a path separator. "
                        f"Received: name={name!r}")
    return name


def check_version(version):
    """`version` as a positive int (None stays None: the next free version)."""
    if version is None:
        return None
    value = None
    if isinstance(version, str) and _DIGITS.fullmatch(version.strip()):
        value = int(version)
    elif isinstance(version, numbers.Integral) and not isinstance(version, bool):
        value = int(version)
    if value is None or not 1 <= value <= MAX_VERSION:
        raise KseqError("--version must be a positive integer (TF Serving's version folder). "
                        f"Received: --version {version!r}")
    return value


def taken_versions(model_dir):
    """`{version: path}` of every all-digit entry in `model_dir`, complete or not."""
    try:
        names = os.listdir(model_dir)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    return {int(n): os.path.join(model_dir, n) for n in names if _DIGITS.fullmatch(n)}


def next_version(model_dir):
    """One past the highest all-digit entry in `model_dir` (1 in an empty folder)."""
    taken = taken_versions(model_dir)
    broken = sorted(p for p in taken.values()
                    if not os.path.isfile(os.path.join(p, "saved_model.pb")))
    if broken:
        logger.warning("TF Serving will fail to load %s (no saved_model.pb): remove %s.",
                       ", ".join(broken), "it" if len(broken) == 1 else "them")
    return max(taken, default=0) + 1


def _version_taken_error(model_dir, version):
    return KseqError(f"Version {version} already exists in {model_dir}; pick another --version "
                     f"or leave it out for the next free one. Received: --version {version}")


def export_to_serving_layout(model, base_dir, name, version=None, **export_options):
    """Exports `model` atomically to `<base_dir>/<name>/<version>` and returns that path.

    Args:
        model: a task model (e.g. a `kseq.models` translator).
        base_dir: the folder TF Serving is given (holds `models.config`).
        name: the model's name: one folder name.
        version: a positive integer, or None for one past the highest version.
        **export_options: `beam_size`, `n_best`, `length_penalty`, `alpha`,
            `max_length`, `xla`, as for `model.export`.

    Raises `KseqError` for a bad name or version, an existing version, an
    unreadable `models.config` or an `OSError` or TensorFlow `OpError` (a full
    disk inside `tf.saved_model.save`) while writing; then no version
    folder is added and `models.config` is unchanged. After the export, the
    model's entry in `models.config` (`base_path: "/models/<name>"`, the
    Docker image's convention) is added or replaced; other entries are kept.

    Example:
        export_to_serving_layout(model, "export", "translator", beam_size=4)
    """
    check_model_name(name)
    version = check_version(version)
    model_dir = os.path.join(base_dir, name)
    config_path = os.path.join(base_dir, MODELS_CONFIG)
    read_models_config(config_path)  # a broken file fails now, before the long export
    if version is not None and version in taken_versions(model_dir):
        raise _version_taken_error(model_dir, version)
    created = not os.path.isdir(model_dir)
    try:
        with staging_directory(model_dir) as staging:
            built = build_saved_model(model, staging, **export_options)
            version_dir = _publish_version(built, model_dir, version)
    except BaseException as error:
        if created:  # leave no empty <base>/<name> behind
            with contextlib.suppress(OSError):
                os.rmdir(model_dir)
        if isinstance(error, (OSError, tf.errors.OpError)):
            raise write_error(error, model_dir) from None
        raise
    try:
        merge_models_config(config_path, name, f"/models/{name}")
    except OSError as error:
        raise KseqError(f"Exported {version_dir} but cannot update {config_path}: "
                        f"{error.strerror or error}. Received: {config_path}") from None
    return version_dir


def _publish_version(built, model_dir, version):
    """Renames `built` to its version folder; an automatic version moves on if taken meanwhile."""
    while True:
        chosen = next_version(model_dir) if version is None else version
        version_dir = os.path.join(model_dir, str(chosen))
        try:
            publish(built, version_dir)
            return version_dir
        except FileExistsError:
            if version is not None:  # created by another process since the check
                raise _version_taken_error(model_dir, version) from None
