"""`kseq presets`: the named presets, or with `--parts` the encoders and decoders a recipe
can name. Loads no TensorFlow."""

from kseq.cli.results import _json_line


def _presets(args):
    from kseq.presets.listing import preset_rows  # no TensorFlow: `kseq presets` is instant

    rows = preset_rows()
    if args.json:
        print("\n".join(_json_line(row) for row in rows))
        return
    # The domain (several words) sits after the one-word columns, padded to the longest.
    width = max([len("domain")] + [len(row["domain"]) for row in rows])
    print(f"{'preset':30s} {'task':11s} {'arch':31s} {'weights':8s} {'domain':{width}s} "
          f"description")
    for row in rows:
        print(f"{row['preset']:30s} {row['task']:11s} {row['arch']:31s} {row['weights']:8s} "
              f"{row['domain']:{width}s} {row['description']}")


def _presets_or_parts(args):
    if not args.parts:
        return _presets(args)
    from kseq.models.part_catalog import parts_table

    print("\n".join(parts_table()))
