"""Corpus scores of strings against raw references: sacrebleu BLEU and chrF, exact match."""


def corpus_scores(hypotheses, references):
    """BLEU, chrF (sacrebleu, default settings) and the share of identical strings.

    Example:
    >>> scores = corpus_scores(["the cat sat on the mat"], ["the cat sat on the mat"])
    >>> scores["bleu"], scores["chrf"], scores["exact_match"]
    (100.0, 100.0, 1.0)
    >>> scores["bleu_signature"].startswith("nrefs:1|case:mixed")
    True
    """
    import sacrebleu

    if len(hypotheses) != len(references):
        raise ValueError("One hypothesis per reference is needed. Received: "
                         f"{len(hypotheses)} hypotheses, {len(references)} references")
    bleu, chrf = sacrebleu.metrics.BLEU(), sacrebleu.metrics.CHRF()
    matches = [h == r for h, r in zip(hypotheses, references)]
    return {
        "bleu": round(bleu.corpus_score(hypotheses, [references]).score, 2),
        "chrf": round(chrf.corpus_score(hypotheses, [references]).score, 2),
        "exact_match": sum(matches) / len(matches) if matches else 0.0,
        "bleu_signature": str(bleu.get_signature()),
        "chrf_signature": str(chrf.get_signature()),
    }
