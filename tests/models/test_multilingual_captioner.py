"""One captioner, several caption languages: a language tag forced as the first token.

The bilingual captioner (captioner_fixtures.overfit_bilingual) is trained once per run;
its export is served in tests/export/test_captioner_export.py, by the one child that
serves the one-language export too.
"""

import keras
import pytest

import kseq
from captioner_fixtures import EXAMPLES, TINY, bilingual_captioner, bilingual_splits, french  # noqa: F401
from kseq.data.datasets.multilingual_captions import multilingual_splits


@pytest.mark.slow  # a 110-step overfit (shared): ~15 s
def test_the_tag_chooses_the_caption_language(bilingual_captioner):
    bilingual = bilingual_captioner
    images = [png for png, _ in EXAMPLES[:6]]
    assert bilingual.languages == ["en", "fr"]
    assert bilingual.caption(images, beam_size=1, language="en") == \
        [c for _, c in EXAMPLES[:6]]
    assert bilingual.caption(images, beam_size=1, language="fr") == \
        [french(c) for _, c in EXAMPLES[:6]]
    best, scores = bilingual.caption(images[:1], language="fr", n_best=2,
                                     return_scores=True)[0]
    assert best[0] == french(EXAMPLES[0][1]) and not best[0].startswith("2fr")
    with pytest.raises(kseq.errors.KseqError, match=r"captions in \['en', 'fr'\] only"):
        bilingual.caption(images, language="de")
    with pytest.raises(kseq.errors.KseqError, match="2-3 letter lower-case code"):
        bilingual.caption(images, language="French")


def test_tags_and_merging():
    from kseq.text.language_tags import language_tag, languages_in

    assert language_tag("fr") == "2fr" and languages_in(["<pad>", "2fr", "2en", "2x", "two"]) \
        == ["en", "fr"]
    merged = multilingual_splits({"en": {"test": [(b"i", "a cat", "animals")]},
                                  "de": {"test": [(b"i", "eine Katze", "animals")]}})
    assert merged == {"test": [(b"i", "2en a cat", "animals"), (b"i", "2de eine Katze",
                                                                 "animals")]}


@pytest.mark.slow
def test_no_search_emits_a_language_tag_after_the_first_token():
    keras.utils.set_random_seed(0)
    untrained = kseq.zoo.captioner("small_cnn", train_data=bilingual_splits()["train"],
                                   **{**TINY, "max_target_length": 14})
    images = [png for png, _ in EXAMPLES] * 4
    # Near-uniform sampling from an untrained model: without the rule, tags (2 of the
    # vocabulary's tokens, 13 draws a caption) would turn up mid-caption many times.
    sampled = untrained.caption(images, sampling=True, temperature=50.0, seed=3)
    forced = untrained.caption(images[:16], beam_size=3, language="fr")
    words = [w for caption in sampled for w in caption.split()[1:]] + \
        [w for caption in forced for w in caption.split()]
    assert len(words) > 200 and not {"2en", "2fr"} & set(words)
