"""Reading gettext `.mo` catalogs (msgid -> msgstr) without extra packages."""

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
    _, count, originals, translations = struct.unpack(order + "4I", data[4:20])
    pairs = []
    try:
        for i in range(count):
            id_length, id_offset = struct.unpack(order + "2I", data[originals + 8 * i:][:8])
            str_length, str_offset = struct.unpack(order + "2I", data[translations + 8 * i:][:8])
            msgid = data[id_offset : id_offset + id_length].split(b"\0")[0]
            msgstr = data[str_offset : str_offset + str_length].split(b"\0")[0]
            pairs.append((msgid.decode("utf-8"), msgstr.decode("utf-8")))
    except (struct.error, UnicodeDecodeError) as error:
        raise ValueError(f"Corrupt .mo catalog ({error}). Received: {path}") from None
    return [(i, s) for i, s in pairs if i and s]
