"""Learning a WordPiece vocabulary from word counts, in seconds instead of minutes.

The algorithm is tensorflow-text's (`wordpiece_tokenizer_learner_lib`, the one
keras-hub's `compute_word_piece_vocabulary` calls): for a count threshold `t`,
iteration 0 counts every substring of every word (a piece after the first
character carries the `##` joiner); each longer piece, visited longest first,
gives its count back to its prefixes; the pieces left with a count >= `t` form
the vocabulary; iterations 1.. recount only the substrings that start where the
current vocabulary splits each word. A search over `t` then aims at the wanted
size (at most `vocab_size`, within 5% of it).

Here the same result per threshold (`learn_with_threshold`, checked against
tensorflow-text's in the tests) is found much faster:

- iteration 0 does not depend on `t` (the give-back happens whatever `t`), so
  it is counted once and only filtered per threshold;
- the search starts from the threshold at which iteration 0 alone would give
  the wanted size, and halves a bracket in log space around it, instead of
  bisecting linearly from the largest word count (about 20 full learns for a
  real corpus, each a few passes over every word: 310 s for 150k texts);
- only the `max_words` most frequent words are learned from (default 30,000;
  rarer words are still tokenised, as pieces of the learned ones).

On the 300k-pair synthetic corpus's 80k distinct words this takes seconds.

Example:
>>> counts = {"low": 50, "lower": 20, "lowest": 10, "new": 40, "newer": 15}
>>> vocabulary = learn_wordpiece(counts, vocab_size=24, reserved_tokens=["<pad>", "<unk>"])
>>> vocabulary[:2], vocabulary[10:15]
(['<pad>', '<unk>'], ['low', 'new', 'lower', 'newer', 'lowest'])
"""

import collections
import math

JOINER = "##"
MAX_TOKEN_LENGTH = 50
MAX_UNIQUE_CHARS = 1000
SLACK_RATIO = 0.05
ITERATIONS = 4
MAX_WORDS = 30_000


def learn_wordpiece(word_counts, vocab_size, reserved_tokens, joiner=JOINER,
                    max_words=MAX_WORDS):
    """A WordPiece vocabulary of at most `vocab_size` tokens (reserved tokens first).

    Args:
        word_counts: `{word: count}` or `(word, count)` pairs (str words).
        vocab_size: the most tokens the vocabulary holds.
        reserved_tokens: tokens that come first, in this order.
        joiner: the prefix of a piece that continues a word.
        max_words: learn from this many of the most frequent words (None: all).
    """
    words = _input_words(word_counts, reserved_tokens, max_words)
    if not words:
        return list(reserved_tokens)
    learner = _Learner(words, reserved_tokens, joiner)
    return learner.search(vocab_size)[:vocab_size]


def learn_with_threshold(word_counts, threshold, reserved_tokens, joiner=JOINER):
    """The vocabulary tensorflow-text's learner makes for one count threshold."""
    words = _input_words(word_counts, reserved_tokens, None)
    return _Learner(words, reserved_tokens, joiner).vocabulary(threshold)


def _input_words(word_counts, reserved_tokens, max_words):
    """Words of at most 50 characters, not reserved, of the 1,000 most frequent characters,
    most frequent first (ties in the order given), at most `max_words` of them."""
    pairs = word_counts.items() if isinstance(word_counts, dict) else word_counts
    reserved = set(reserved_tokens)
    kept = [(w, c) for w, c in pairs if len(w) <= MAX_TOKEN_LENGTH and w not in reserved]
    char_counts = collections.Counter()
    for word, count in kept:
        for char in word:
            char_counts[char] += count
    ranked = sorted(sorted(char_counts.items()), key=lambda item: item[1], reverse=True)
    allowed = {char for char, _ in ranked[:MAX_UNIQUE_CHARS]}
    kept = sorted(kept, key=lambda item: item[1], reverse=True)  # stable: ties keep order
    words = [(w, c) for w, c in kept if all(char in allowed for char in w)]
    return words if max_words is None else words[:max_words]


class _Learner:
    """One word list's learning, iteration 0 counted once for every threshold."""

    def __init__(self, words, reserved_tokens, joiner):
        self.words, self.reserved, self.joiner = words, list(reserved_tokens), joiner
        self.chars = {char for word, _ in words for char in word}
        self.first = self._kept_counts(self._piece_counts(None))  # iteration 0, any threshold
        self.sizes = {}

    def vocabulary(self, threshold):
        """The final vocabulary for `threshold`: reserved tokens, characters, then pieces
        by count (ties alphabetical)."""
        tokens = self._with_chars({t: c for t, c in self.first.items() if c >= threshold})
        for _ in range(ITERATIONS - 1):
            counts = self._kept_counts(self._piece_counts(tokens))
            tokens = self._with_chars({t: c for t, c in counts.items() if c >= threshold})
        ranked = sorted(sorted(tokens.items()), key=lambda item: item[1], reverse=True)
        ordered = self.reserved + sorted(self.chars) + [token for token, _ in ranked]
        return list(dict.fromkeys(ordered))  # first occurrence of each, in order

    def search(self, vocab_size):
        """The vocabulary of the threshold whose size is at most `vocab_size` and within
        5% of it; failing that, the largest one not over `vocab_size` that was seen
        (else the smallest seen).

        Sizes fall roughly as a power of the threshold, so each next threshold is
        interpolated in log-log space between the nearest tried ones (kept inside the
        bracket `[low, high)`): three or four learns instead of a bisection's dozen.
        """
        low, high = 1, max(count for _, count in self.words) + 1
        tried = {}
        threshold = self._first_guess(vocab_size)
        while low < high:
            tried[threshold] = vocabulary = self.vocabulary(threshold)
            size = len(vocabulary)
            if size <= vocab_size and vocab_size - size <= SLACK_RATIO * vocab_size:
                return vocabulary
            if size > vocab_size:
                low = threshold + 1
            else:
                high = threshold
            if low >= high:
                break
            threshold = _next_threshold(tried, vocab_size * (1 - SLACK_RATIO / 2), low, high)
        fitting = [v for v in tried.values() if len(v) <= vocab_size]
        return max(fitting, key=len) if fitting else min(tried.values(), key=len)

    def _first_guess(self, vocab_size):
        """The threshold at which iteration 0 alone keeps `vocab_size` pieces."""
        counts = sorted(self.first.values(), reverse=True)
        room = max(1, vocab_size - len(self.reserved) - 2 * len(self.chars))
        return max(1, counts[min(room, len(counts)) - 1]) if counts else 1

    def _with_chars(self, tokens):
        """Every character, alone and as a continuation, is a token (count 1 if new)."""
        for char in self.chars:
            tokens.setdefault(char, 1)
            tokens.setdefault(self.joiner + char, 1)
        return tokens

    def _piece_counts(self, tokens):
        """`{piece: count}` of the substrings that start where `tokens` splits each word
        (every position when `tokens` is None)."""
        counts, joiner = {}, self.joiner
        get = counts.get
        for word, count in self.words:
            starts = range(len(word)) if tokens is None else self._piece_starts(word, tokens)
            if starts is None:
                continue
            for start in starts:
                if start == 0:
                    for end in range(1, len(word) + 1):
                        piece = word[:end]
                        counts[piece] = get(piece, 0) + count
                else:
                    for end in range(start + 1, len(word) + 1):
                        piece = joiner + word[start:end]
                        counts[piece] = get(piece, 0) + count
        return counts

    def _piece_starts(self, word, tokens):
        """Where the longest-match split of `word` by `tokens` starts each piece, or None
        when a part of the word matches no token."""
        starts, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else self.joiner + word[start:end]
                if piece in tokens:
                    break
                end -= 1
            if end == start:
                return None
            starts.append(start)
            start = end
        return starts

    def _kept_counts(self, counts):
        """`{piece: count}` after each piece, longest first, gave its count back to its
        prefixes (what remains is the count of the piece as a whole).

        Every prefix of a counted piece is counted too (a start counts all its ends), so
        what a piece gets back in total is the raw count of its one-character-longer
        extensions: `kept[p] = raw[p] - sum(raw[p + c])`, one pass instead of a loop
        over every prefix of every piece.
        """
        given_back, joiner = {}, self.joiner
        get = given_back.get
        for piece, count in counts.items():
            parent = piece[:-1]
            if parent and parent != joiner:  # "##a" has no parent piece
                given_back[parent] = get(parent, 0) + count
        return {piece: count - get(piece, 0) for piece, count in counts.items()}


def _next_threshold(tried, wanted, low, high):
    """A threshold in `[low, high)` where the size should be `wanted`: log-log
    interpolation between the tried thresholds nearest on either side (a slope of -1
    from the one nearest, when all lie on one side); one not tried yet."""
    below = [(t, n) for t, n in ((t, len(v)) for t, v in tried.items()) if n > wanted]
    above = [(t, n) for t, n in ((t, len(v)) for t, v in tried.items()) if n <= wanted]
    if below and above:
        (t1, n1), (t2, n2) = max(below), min(above)
        slope = (math.log(n2) - math.log(n1)) / (math.log(t2) - math.log(t1) or 1.0)
    else:
        (t1, n1), slope = (max(below) if below else min(above)), -1.0
    slope = min(slope, -0.05)  # sizes fall with the threshold
    guess = math.exp(math.log(t1) + (math.log(wanted) - math.log(n1)) / slope)
    threshold = min(max(int(round(guess)), low), high - 1)
    while threshold in tried and threshold + 1 < high:
        threshold += 1
    return threshold
