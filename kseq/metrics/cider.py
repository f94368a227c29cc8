r"""CIDEr-D (Vedantam, Zitnick & Parikh 2015), in pure Python: consensus of a caption with its
references, by TF-IDF weighted n-grams.

For each item `i` of the evaluated corpus (one hypothesis `c_i`, references
`S_i = {s_i1, ..., s_im}`) and each n-gram order `n = 1..4`, a caption `x` is a
vector `g_n(x)` over its n-grams `w`:

    g_n(x)[w] = count of w in x · log(|I| / max(1, df(w)))

where `|I|` is the number of items and `df(w)` the number of items whose
references (any of them) contain `w`: document frequencies come from the
references of the corpus being scored, so an n-gram every item's references
share weighs 0, and so does everything in a one-item corpus (log 1 = 0). An
n-gram no reference has (df 0) takes the largest weight, `log |I|`. Then

    CIDEr-D_n(c_i, S_i) = 1/m · Σ_j  e^(−(l(c_i) − l(s_ij))² / 2σ²)
                          · Σ_w min(g_n(c_i)[w], g_n(s_ij)[w]) · g_n(s_ij)[w]
                            / (‖g_n(c_i)‖ · ‖g_n(s_ij)‖)

(0 when either norm is 0), `l` a caption's length in tokens, and the item's
score is `10 · mean over n` of those. The corpus score is the mean of the item
scores.

Variant: **CIDEr-D** by default, as the `coco-caption` toolkit computes the
figure captioning papers report as "CIDEr" — the Gaussian length penalty
(σ = 6), the clipped numerator `min(g(c), g(s)) · g(s)` (repeating a reference
word does not pay), and the factor 10. Differences from that toolkit: the
tokeniser (below; coco-caption runs the Stanford PTB tokeniser and drops
punctuation), and lengths count tokens (coco-caption counts bigrams, one fewer,
which gives the same difference unless a caption is empty; an empty
hypothesis scores 0 either way). `sigma=None, clipped=False` gives the
original CIDEr (plain cosine similarity per order; term frequencies normalised
or not, the cosine is the same), still ×10.

Tokenisation (`cider_tokens`): control characters made spaces (as the in-graph
tokenizers do), NFC, lower-case, each Unicode punctuation character (category
P*) made a token of its own, then split on whitespace:
`"Keycap: #1"` -> `["keycap", ":", "#", "1"]`. Scripts written without spaces
(Japanese, Chinese) give one token per space-separated run, so there CIDEr is
close to exact match.

The highest score of an item is that of a hypothesis identical to its one
reference: 10 when that reference has at least 4 tokens of non-zero weight in
each order, less for shorter captions (an order with no weighted n-gram adds 0:
"a cat" identical to its reference scores 10 · (1 + 1 + 0 + 0) / 4 = 5).

Example:
>>> score, item_scores = cider(["a cat", "a dog"], ["a cat", "a dog"])
>>> score, item_scores
(5.0, [5.0, 5.0])
>>> cider_tokens("Flag: United States")
['flag', ':', 'united', 'states']
"""

import collections
import math
import unicodedata

from kseq.errors import KseqError
from kseq.text.control_characters import replace_control_characters

CiderResult = collections.namedtuple("CiderResult", ["score", "item_scores"])


def cider_tokens(text):
    """`text` lower-cased and split into words and single punctuation characters."""
    text = unicodedata.normalize("NFC", replace_control_characters(text)).lower()
    spaced = "".join(f" {c} " if unicodedata.category(c).startswith("P") else c for c in text)
    return spaced.split()


def ngram_counts(tokens, max_n):
    """`Counter` of the 1- to `max_n`-grams (tuples) of `tokens`."""
    return collections.Counter(tuple(tokens[start:start + n]) for n in range(1, max_n + 1)
                               for start in range(len(tokens) - n + 1))


def cider(hypotheses, references, max_n=4, sigma=6.0, clipped=True):
    """CIDEr-D of `hypotheses` against `references`; returns `(score, item_scores)`.

    Args:
        hypotheses: a list of strings, one per item.
        references: a list with one entry per item: a string (one reference)
            or a non-empty list of strings.
        max_n: the longest n-gram (4).
        sigma: the length penalty's standard deviation in tokens (6);
            None turns the penalty off.
        clipped: clip the hypothesis's n-gram weights at the reference's
            (CIDEr-D); False is the plain cosine of the original CIDEr.

    Returns:
        `CiderResult(score, item_scores)`: the corpus score (the mean of the
        item scores) and a list of floats, one per item.

    Raises:
        KseqError: naming the argument that is not what it should be.
    """
    hypotheses, references = _checked(hypotheses, references, max_n, sigma)
    hypothesis_counts = [ngram_counts(cider_tokens(h), max_n) for h in hypotheses]
    reference_counts = [[ngram_counts(cider_tokens(r), max_n) for r in item]
                        for item in references]
    document_frequency = collections.Counter(
        ngram for item in reference_counts for ngram in set().union(*item))
    log_items = math.log(len(hypotheses))

    def vector(counts):  # -> ({ngram: weight}, [norm per order], length in tokens)
        weights = {w: count * (log_items - math.log(max(1, document_frequency[w])))
                   for w, count in counts.items()}
        norms = [0.0] * max_n
        for w, weight in weights.items():
            norms[len(w) - 1] += weight * weight
        length = sum(count for w, count in counts.items() if len(w) == 1)
        return weights, [math.sqrt(norm) for norm in norms], length

    item_scores = []
    for counts, item in zip(hypothesis_counts, reference_counts):
        hypothesis = vector(counts)
        total = sum(_similarity(hypothesis, vector(ref), max_n, sigma, clipped) for ref in item)
        item_scores.append(10.0 * total / (max_n * len(item)))
    return CiderResult(sum(item_scores) / len(item_scores), item_scores)


def _similarity(hypothesis, reference, max_n, sigma, clipped):
    """Σ over orders of the (clipped) cosine of two vectors, times the length penalty."""
    (h_weights, h_norms, h_length), (r_weights, r_norms, r_length) = hypothesis, reference
    products = [0.0] * max_n
    for w, weight in h_weights.items():
        if w in r_weights:
            products[len(w) - 1] += (min(weight, r_weights[w]) if clipped else weight) * \
                r_weights[w]
    total = sum(product / (h_norm * r_norm)
                for product, h_norm, r_norm in zip(products, h_norms, r_norms)
                if h_norm > 0 and r_norm > 0)
    if sigma is not None:
        total *= math.exp(-((h_length - r_length) ** 2) / (2.0 * sigma * sigma))
    return total


def _checked(hypotheses, references, max_n, sigma):
    """The arguments as lists (each item's references a list), or `KseqError`."""
    if not isinstance(hypotheses, (list, tuple)) or not all(
            isinstance(h, str) for h in hypotheses):
        raise KseqError(f"`hypotheses` must be a list of strings. Received: "
                        f"hypotheses={hypotheses!r:.200}")
    if not isinstance(references, (list, tuple)):
        raise KseqError(f"`references` must be a list (a string or a list of strings per "
                        f"item). Received: references={references!r:.200}")
    if len(hypotheses) != len(references):
        raise KseqError(f"`hypotheses` and `references` need one entry per item. Received: "
                        f"{len(hypotheses)} hypotheses, {len(references)} references")
    if not hypotheses:
        raise KseqError("`hypotheses` must hold at least one item. Received: hypotheses=[]")
    items = []
    for index, item in enumerate(references):
        item = [item] if isinstance(item, str) else item
        if not isinstance(item, (list, tuple)) or not item or not all(
                isinstance(r, str) for r in item):
            raise KseqError(f"Each entry of `references` must be a string or a non-empty list "
                            f"of strings. Received: references[{index}]={item!r:.200}")
        items.append(list(item))
    if isinstance(max_n, bool) or not isinstance(max_n, int) or max_n < 1:
        raise KseqError(f"`max_n` must be an integer >= 1. Received: max_n={max_n!r}")
    if sigma is not None and (isinstance(sigma, bool) or not isinstance(sigma, (int, float))
                              or not sigma > 0):
        raise KseqError(f"`sigma` must be a number > 0 or None. Received: sigma={sigma!r}")
    return list(hypotheses), items
