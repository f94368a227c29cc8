"""Minimum-Bayes-risk choice: sacrebleu's sentence chrF, consensus over the beam."""

import random

import pytest
import sacrebleu

import kseq
from kseq.decoding.mbr import chrf, mbr_choice, posterior
from kseq.errors import KseqError

WORDS = "the cat sat on a mat red circle blue face with tears of joy skin tone".split()


def test_chrf_is_sacrebleus_sentence_chrf():
    rng = random.Random(0)
    for _ in range(300):
        hypothesis = " ".join(rng.choices(WORDS, k=rng.randint(0, 6)))
        reference = " ".join(rng.choices(WORDS, k=rng.randint(1, 6)))
        assert chrf(hypothesis, reference) == pytest.approx(
            sacrebleu.sentence_chrf(hypothesis, [reference]).score, abs=1e-9)


def test_an_unsure_beam_gets_the_consensus_and_a_sure_one_its_top():
    candidates = ["man in suit", "woman in suit", "person in suit", "violin"]
    scores = [-2.0, -2.1, -2.1, -1.9]  # "violin" on top by a hair
    assert candidates[mbr_choice(candidates, scores, temperature=1.0)].endswith(" in suit")
    assert mbr_choice(candidates, scores, temperature=0.01) == 3  # nearly all mass on top
    assert posterior([0.0, 0.0], 1.0) == [0.5, 0.5]
    with pytest.raises(ValueError, match="at least one candidate"):
        mbr_choice([], [])


@pytest.mark.slow
def test_generate_with_mbr_returns_one_of_the_beams_hypotheses():
    model = kseq.zoo.translator("numbers_fr_transformer")
    texts = ["forty-two", "seven hundred and one", ""]
    beams = model.translate(texts, beam_size=4, n_best=4)
    chosen = model.translate(texts, beam_size=4, mbr=True)
    assert all(c in b for c, b in zip(chosen[:2], beams[:2])) and chosen[2] == ""
    assert chosen[:2] == ["quarante-deux", "sept cent un"]
    for bad, message in ((dict(beam_size=1), "beam_size >= 2"), (dict(n_best=2), "n_best=1"),
                         (dict(mbr="yes"), "True or False"),
                         (dict(mbr_temperature=0), "mbr_temperature")):
        options = {"beam_size": 4, "mbr": True, **bad}
        with pytest.raises(KseqError, match=message):
            model.translate(["one"], **options)


@pytest.mark.slow
def test_the_cli_takes_mbr(capsys):
    from kseq.cli import main

    assert main(["translate", "numbers_fr_transformer", "forty-two", "--beam", "4",
                 "--mbr"]) == 0
    assert capsys.readouterr().out.strip() == "quarante-deux"
    assert main(["translate", "numbers_fr_transformer", "one", "--beam", "4", "--mbr",
                 "--n-best", "2"]) == 2
    assert "needs beam_size >= 2, n_best=1" in capsys.readouterr().err
