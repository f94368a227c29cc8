"""`kseq presets`: the named presets as a table that fits the terminal, `kseq presets NAME`
one preset's card, `--parts` the encoders and decoders a recipe can name. Loads no
TensorFlow.

The table is as wide as the terminal (`COLUMNS`, else the terminal's width, else 80 when the
output is no terminal): the preset, its task and weights always; the description cut to
fit (with "..."); the architecture and domain columns where there is room beside a
description of `DESCRIPTION_ROOM` characters. `--json` prints every field, uncut.

Example:
>>> from kseq.presets.listing import preset_rows
>>> lines = table_lines(preset_rows(), 70)
>>> max(len(line) for line in lines), lines[0].split()
(70, ['preset', 'task', 'weights', 'description'])
>>> table_lines(preset_rows(), 200)[0].split()
['preset', 'task', 'arch', 'weights', 'domain', 'description']
"""

import shutil
import textwrap

from kseq.cli.results import _json_line

DESCRIPTION_ROOM = 30  # the least description width the optional columns leave
# Columns by key and header, in printed order; `optional` ones go first when narrow.
COLUMNS = (("preset", "preset"), ("task", "task"), ("arch", "arch"), ("weights", "weights"),
           ("domain", "domain"), ("description", "description"))
OPTIONAL = ("domain", "arch")  # dropped in this order


def terminal_width():
    """`COLUMNS`, else the terminal's width, else 80 (output to a pipe or a file)."""
    return shutil.get_terminal_size((80, 24)).columns


def table_lines(rows, width):
    """`rows` (`preset_rows()`) as a table `width` characters wide at most: the optional
    columns dropped where a description would get fewer than `DESCRIPTION_ROOM`, the
    description cut with "..." (a row never cut before its preset's name)."""
    widths = {key: max(len(header), *(len(row[key]) for row in rows))
              for key, header in COLUMNS if key != "description"}
    shown = [key for key, _ in COLUMNS if key != "description"]
    for key in OPTIONAL:
        if sum(widths[k] + 1 for k in shown) + DESCRIPTION_ROOM <= width:
            break
        shown.remove(key)
    room = max(width - sum(widths[key] + 1 for key in shown), 1)
    headers = dict(COLUMNS)
    lines = []
    for row in [headers] + rows:
        fixed = " ".join(f"{row[key]:{widths[key]}s}" for key in shown)
        text = row["description"] if row is headers else _cut(row["description"], room)
        lines.append(f"{fixed} {text}".rstrip())
    return lines


def _cut(text, room):
    return text if len(text) <= room else text[: max(room - 3, 0)] + "..."


def card_lines(name, width):
    """Preset `name`'s card (`kseq.presets.preset_card`), each field wrapped to `width`."""
    from kseq.presets.preset_card import card_fields

    label_width = 12
    lines = []
    for label, text in card_fields(name):
        wrapped = textwrap.wrap(text, max(width - label_width, 20), break_long_words=False,
                                break_on_hyphens=False) or ["-"]
        lines.append(f"{label:{label_width}s}{wrapped[0]}")
        lines += [" " * label_width + more for more in wrapped[1:]]
    return lines


def parts_lines(width):
    """The part catalog (`kseq.cli.part_listing`): name, kind, class, then its options with
    their defaults, wrapped to `width`."""
    from kseq.cli.part_listing import PARTS

    indent = 48  # the options' column, as `kseq.models.part_catalog.parts_table` lays it out
    lines = [f"{'part':18s} {'kind':8s} {'class':19s} options (None: derived)"]
    for name, kind, cls, options in PARTS:
        wrapped = textwrap.wrap(" ".join(options), max(width - indent, 20),
                                break_long_words=False) or [""]
        lines.append(f"{name:18s} {kind:8s} {cls:19s} {wrapped[0]}".rstrip())
        lines += [" " * indent + more for more in wrapped[1:]]
    return lines


def _presets(args):
    from kseq.presets.listing import preset_rows  # no TensorFlow: `kseq presets` is instant

    if args.name:
        return _card(args)
    rows = preset_rows()
    if args.json:
        print("\n".join(_json_line(row) for row in rows))
    else:
        print("\n".join(table_lines(rows, terminal_width())))


def _card(args):
    from kseq.cli.path_checks import _unknown_name
    from kseq.presets.catalog import canonical_name, is_preset, preset_recipe

    if not is_preset(args.name):
        raise _unknown_name(args.name, "preset")
    if args.json:  # the catalog's whole entry: the recipe and its weights
        print(_json_line({"preset": canonical_name(args.name), **preset_recipe(args.name)}))
    else:
        print("\n".join(card_lines(args.name, terminal_width())))


def _presets_or_parts(args):
    if not args.parts:
        return _presets(args)
    if args.name:
        from kseq.errors import KseqError

        raise KseqError(f"--parts lists every part; it takes no preset name. Received: "
                        f"--parts {args.name}")
    print("\n".join(parts_lines(terminal_width())))
