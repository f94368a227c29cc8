"""Which split an example belongs to, by a hash of its input: the same input always
lands in the same split, whatever the file's order or size, in one pass.

Shares: 2% test, 2% validation, 96% training (`SHARES`); the hash is SHA-1 of
the input's UTF-8 bytes (an image's path or bytes), taken modulo 100.

Example:
>>> split_of("one hundred")
'train'
>>> sorted({split_of(str(n)) for n in range(500)})
['test', 'train', 'valid']
"""

import hashlib

SHARES = {"test": 2, "valid": 2}  # percent; the rest is "train"


def split_of(key, valid_percent=SHARES["valid"], test_percent=SHARES["test"]):
    """"train", "valid" or "test" for an example whose input is `key` (str or bytes)."""
    data = key if isinstance(key, (bytes, bytearray)) else str(key).encode("utf-8")
    bucket = int.from_bytes(hashlib.sha1(data).digest(), "big") % 100  # as kseq always split
    if bucket < test_percent:
        return "test"
    return "valid" if bucket < test_percent + valid_percent else "train"
