"""Train / valid / test by a seeded hash of a key: the same key lands in the same split.

Builders whose examples share a key (an emoji's code points, a stamp's
English caption) call `split_of` on the key, so every example with that key
is in one split, on every machine and call, whatever the order of the data.
The shares are only approximate (a hash, not a shuffle); a larger test share
moves keys into test and never out of it.

Example:
>>> from kseq.data.datasets.keyed_split import split_of
>>> split_of("a penguin") == split_of("a penguin")
True
>>> sorted({split_of(f"key {i}") for i in range(100)})
['test', 'train', 'valid']
"""

import hashlib

SPLITS = ("train", "valid", "test")
VALID_PERCENT = 10
TEST_PERCENT = 20


def unit_of(key, seed=0):
    """A fixed number in [0, 1) for the string `key` under the integer `seed` (SHA-1)."""
    digest = hashlib.sha1(f"{seed}\0{key}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_of(key, seed=0, valid_percent=VALID_PERCENT, test_percent=TEST_PERCENT):
    """`"train"`, `"valid"` or `"test"` for `key`: test below `test_percent`%, then valid."""
    u = unit_of(key, seed)
    if u < test_percent / 100:
        return "test"
    return "valid" if u < (test_percent + valid_percent) / 100 else "train"
