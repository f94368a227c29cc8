"""The `shapes_captions` builder: a stable tuple split, deterministic PNGs, drawn relations."""

import itertools

import numpy as np
import pytest
import tensorflow as tf

from kseq.data import shapes_caption_tuples, shapes_captions
from kseq.data.datasets.shapes_captions import (
    COLOUR_VALUES,
    COLOURS,
    RELATIONS,
    SHAPES,
    caption_of,
    parse_caption,
)
from kseq.errors import KseqError

OBJECTS = [(colour, shape) for colour in COLOURS for shape in SHAPES]
ALL_TUPLES = {(*a, relation, *b) for a in OBJECTS for b in OBJECTS if a != b
              for relation in RELATIONS}
CONVERSE = {"above": "below", "below": "above", "left of": "right of", "right of": "left of"}


@pytest.fixture(scope="module")
def splits():
    return shapes_captions(train_size=120, valid_size=40, test_size=80, seed=3)


def decode(png):
    return tf.io.decode_png(png, channels=0).numpy()


def test_constants_are_big_enough():
    assert len(COLOURS) >= 5 and len(SHAPES) >= 4
    assert set(RELATIONS) == {"above", "below", "left of", "right of"}
    assert set(COLOUR_VALUES) == set(COLOURS)


def test_same_seed_same_bytes_and_other_seed_other_images(splits):
    again = shapes_captions(train_size=120, valid_size=40, test_size=80, seed=3)
    assert again == splits
    other = shapes_captions(train_size=120, valid_size=40, test_size=80, seed=4)
    for name in ("train", "valid", "test"):
        same = sum(a[0] == b[0] for a, b in zip(splits[name], other[name]))
        assert same == 0, name


def test_one_split_size_leaves_the_others_alone(splits):
    more_valid = shapes_captions(train_size=120, valid_size=7, test_size=80, seed=3)
    assert more_valid["train"] == splits["train"] and more_valid["test"] == splits["test"]


def test_sizes_and_empty_splits():
    only_test = shapes_captions(train_size=0, valid_size=0, test_size=3, image_size=32)
    assert [len(only_test[n]) for n in ("train", "valid", "test")] == [0, 0, 3]


def test_tuple_split_is_disjoint_complete_and_stable():
    split = shapes_caption_tuples()
    sets = {name: set(tuples) for name, tuples in split.items()}
    assert set(split) == {"train", "valid", "test"}
    for name, tuples in split.items():
        assert len(sets[name]) == len(tuples), name  # no duplicates
    for a, b in itertools.combinations(sets.values(), 2):
        assert not a & b
    assert set.union(*sets.values()) == ALL_TUPLES
    assert len(split["test"]) == 0.2 * len(ALL_TUPLES)  # 696 of 3,480
    assert len(split["valid"]) == 0.1 * len(ALL_TUPLES)
    assert shapes_caption_tuples() == split  # fixed, not drawn from `seed`
    split["train"].clear()  # callers get copies
    assert len(shapes_caption_tuples()["train"]) == len(sets["train"])


def test_converse_tuples_share_a_split():
    # "A above B" and "B below A" show the same layout: the test split must not leak.
    for name, tuples in shapes_caption_tuples().items():
        chosen = set(tuples)
        for c1, s1, relation, c2, s2 in tuples:
            assert (c2, s2, CONVERSE[relation], c1, s1) in chosen, name


def test_training_covers_every_object_in_both_roles_and_every_relation():
    train = shapes_caption_tuples()["train"]
    assert {t[:2] for t in train} == set(OBJECTS)
    assert {t[3:] for t in train} == set(OBJECTS)
    assert {t[2] for t in train} == set(RELATIONS)


def test_captions_parse_back_into_their_split(splits):
    tuples = shapes_caption_tuples()
    for name, pairs in splits.items():
        for _, caption in pairs:
            scene = parse_caption(caption)
            assert scene in tuples[name] and caption_of(scene) == caption
    assert caption_of(("orange", "cross", "left of", "red", "circle")) == (
        "an orange cross left of a red circle")


@pytest.mark.parametrize("caption", [
    "a red circle above a red circle",  # the same object twice
    "a orange circle above a red square",  # wrong article
    "a red circle beside a blue square",
    "a pink circle above a blue square",
    "a red circle above",
    "",
    None,
])
def test_bad_captions_are_refused(caption):
    with pytest.raises(KseqError, match="caption"):
        parse_caption(caption)


@pytest.mark.parametrize("image_size", [32, 64, 97])
def test_pngs_decode_to_rgb_on_white(image_size):
    pairs = shapes_captions(train_size=4, valid_size=0, test_size=0, image_size=image_size)
    for png, _ in pairs["train"]:
        image = decode(png)
        assert image.shape == (image_size, image_size, 3) and image.dtype == np.uint8
        assert (image[0] == 255).all() and (image[:, -1] == 255).all()  # a white margin
        assert (image != 255).any(axis=-1).mean() > 0.03  # objects are drawn


def _object_pixels(image, colour):
    """(rows, cols) of pixels within the jitter of `colour`'s palette value."""
    distance = np.abs(image.astype(int) - np.array(COLOUR_VALUES[colour])).max(axis=-1)
    return np.nonzero(distance <= 12)


def test_objects_sit_where_the_relation_says(splits):
    checked = {relation: 0 for relation in RELATIONS}
    for png, caption in itertools.chain(*splits.values()):
        c1, _, relation, c2, _ = parse_caption(caption)
        if c1 == c2:
            continue
        image = decode(png)
        (rows1, cols1), (rows2, cols2) = _object_pixels(image, c1), _object_pixels(image, c2)
        assert min(len(rows1), len(rows2)) >= 40, caption  # both clearly visible at 64 px
        main1, main2, cross1, cross2 = {
            "above": (rows1, rows2, cols1, cols2), "below": (rows2, rows1, cols2, cols1),
            "left of": (cols1, cols2, rows1, rows2), "right of": (cols2, cols1, rows2, rows1),
        }[relation]
        assert main1.max() < main2.min(), caption  # apart on the main axis: no overlap
        distance = main2.mean() - main1.mean()
        assert abs(cross1.mean() - cross2.mean()) < 0.5 * distance, caption  # unambiguous
        # The object named first is the larger one (one caption per picture).
        extent = lambda rows, cols: max(np.ptp(rows), np.ptp(cols))
        assert extent(rows1, cols1) > extent(rows2, cols2), caption
        non_white = (image != 255).any(axis=-1).sum()
        assert non_white == len(rows1) + len(rows2), caption  # nothing but the two objects
        checked[relation] += 1
    assert min(checked.values()) >= 20, checked


@pytest.mark.parametrize("argument, value", [
    ("train_size", -1), ("valid_size", 2.5), ("test_size", True), ("train_size", 10**7),
    ("image_size", 31), ("image_size", 513), ("image_size", 64.0), ("seed", -1), ("seed", "0"),
])
def test_bad_arguments_name_the_argument(argument, value):
    with pytest.raises(KseqError, match=f"`{argument}`.*Received: {argument}="):
        shapes_captions(**{argument: value})


def test_no_images_at_all_is_refused():
    with pytest.raises(KseqError, match="train_size \\+ valid_size \\+ test_size"):
        shapes_captions(train_size=0, valid_size=0, test_size=0)
