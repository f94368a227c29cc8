"""Reading gettext `.mo` catalogs (msgid -> msgstr) without extra packages."""

import operator
import struct

MAGIC_LITTLE, MAGIC_BIG = 0x950412DE, 0xDE120495


def read_mo(path):
    """Returns `[(msgid, msgstr)]` of a `.mo` file; plural forms give their first form.

    Raises `ValueError` naming the file when it is not a valid catalog.
    """
    with open(path, "rb") as handle:
        data = handle.read()
    if len(data) < 20:
        raise ValueError(f"Not a .mo catalog (too short). Received: {path}")
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == MAGIC_LITTLE else ">" if magic == MAGIC_BIG else None
    if order is None:
        raise ValueError(f"Not a .mo catalog (bad magic number). Received: {path}")
    _, count, originals, translations = struct.unpack_from(order + "4I", data, 4)
    if max(originals, translations) + 8 * count > len(data):
        raise ValueError(f"Corrupt .mo catalog ({count} entries do not fit in {len(data)} "
                         f"bytes). Received: {path}")
    # Both tables at once, read in place: slicing `data` per entry copied the file each time.
    try:
        msgids = _strings(data, struct.unpack_from(f"{order}{2 * count}I", data, originals))
        msgstrs = _strings(data, struct.unpack_from(f"{order}{2 * count}I", data, translations))
    except ValueError as error:  # UnicodeDecodeError too
        raise ValueError(f"Corrupt .mo catalog ({error}). Received: {path}") from None
    return [(i, s) for i, s in zip(msgids, msgstrs) if i and s]


def _strings(data, table):
    """The strings of a `(length, offset)` table; plural forms give their first form."""
    lengths, offsets = table[0::2], table[1::2]
    if lengths and max(map(operator.add, lengths, offsets)) > len(data):
        raise ValueError("a string runs past the end of the file")
    return [data[offset : offset + length].partition(b"\0")[0].decode("utf-8")
            for length, offset in zip(lengths, offsets)]
