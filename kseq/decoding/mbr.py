"""Minimum-Bayes-risk choice among a beam's n-best: the candidate the others agree with.

The beam's best hypothesis is the single most probable string; when the model
is unsure (an image unlike any it was trained on), several candidates share
the probability and the top one is a coin toss. MBR (Kumar & Byrne, 2004)
instead picks the candidate with the highest expected similarity to all the
others, each weighted by the model's probability:

    choice = argmax_i sum_j p_j · chrF(candidate_i, candidate_j),
    p = softmax(scores / temperature)

so on a confident row it keeps the top hypothesis, and on an unsure one it
picks the consensus. The similarity is sentence chrF (character 1..6-grams,
β = 2, whitespace ignored), computed here from each candidate's n-gram counts
once, the same figure as `sacrebleu.sentence_chrf` (tested).

Example:
>>> round(chrf("the cat sat", "the cat sat"), 1), round(chrf("cat", "dog"), 1)
(100.0, 0.0)
>>> candidates = ["red circle", "red circles", "blue square"]  # "blue square" scores best
>>> candidates[mbr_choice(candidates, [-1.0, -1.1, -0.9])]
'red circles'
"""

import math
from collections import Counter

CHAR_ORDER = 6
BETA = 2.0


def char_ngrams(text, order=CHAR_ORDER):
    """Counts of the text's character 1..`order`-grams, whitespace removed (chrF's)."""
    joined = "".join(text.split())
    return [Counter(joined[i:i + n] for i in range(len(joined) - n + 1))
            for n in range(1, order + 1)]


def chrf_from_ngrams(hypothesis, reference, beta=BETA):
    """Sentence chrF (0-100) of two `char_ngrams` results; sacrebleu's default averaging
    (precision and recall averaged over the orders both sides have)."""
    precision = recall = 0.0
    orders = 0
    for hyp, ref in zip(hypothesis, reference):
        hyp_total, ref_total = sum(hyp.values()), sum(ref.values())
        if hyp_total and ref_total:
            matches = sum((hyp & ref).values())
            precision += matches / hyp_total
            recall += matches / ref_total
            orders += 1
    if not orders:
        return 0.0
    precision, recall = precision / orders, recall / orders
    if precision + recall == 0:
        return 0.0
    factor = beta ** 2
    return 100 * (1 + factor) * precision * recall / (factor * precision + recall)


def chrf(hypothesis, reference):
    """Sentence chrF of two strings."""
    return chrf_from_ngrams(char_ngrams(hypothesis), char_ngrams(reference))


def posterior(scores, temperature):
    """softmax(scores / temperature) as a list."""
    top = max(scores)
    weights = [math.exp((score - top) / temperature) for score in scores]
    total = sum(weights)
    return [weight / total for weight in weights]


def mbr_choice(candidates, scores, temperature=1.0):
    """The index of the candidate with the highest expected chrF against all candidates,
    weighted by `posterior(scores, temperature)`; ties go to the earlier (better-ranked)
    candidate. Candidates with a non-finite score are left out (all of them: 0). An
    empty candidate list has no choice (`ValueError`)."""
    if not candidates:
        raise ValueError("mbr_choice needs at least one candidate. Received: []")
    # A beam slot that never got a hypothesis scores -inf: it neither votes nor wins.
    kept = [i for i, score in enumerate(scores) if math.isfinite(score)]
    if not kept:
        return 0
    weights = posterior([scores[i] for i in kept], temperature)
    ngrams = [char_ngrams(candidates[i]) for i in kept]
    best, best_gain = kept[0], -1.0
    for index, own in zip(kept, ngrams):
        gain = sum(weight * chrf_from_ngrams(own, other)
                   for weight, other in zip(weights, ngrams))
        if gain > best_gain + 1e-12:
            best, best_gain = index, gain
    return best
