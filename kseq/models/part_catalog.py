"""Part catalogs: encoders and decoders by name, built from a recipe's flat options.

A factory is registered under a name with `@register_encoder(name, kind)`
(`kind` "text" or "image") or `@register_decoder(name)`. It takes the
vocabulary size (None for an image encoder) and keyword options named as in a
recipe's `model` section, and returns the part (named "encoder" or
"decoder", so saved weights keep their paths); it takes exactly the options
it uses, so a stray one raises `TypeError`. A default of None in a factory is
derived from another option (`units=None` means `hidden_dim`).

Every task's `architectures` module builds its parts here: `split_options`
hands each chosen part the options it takes, and refuses an option that no
registered part takes (a misspelling) with `TypeError`. An option of another
registered part (a Transformer's `num_heads` beside an RNN decoder) is left
unused, so a recipe can switch parts (`--set model.decoder=attention`)
without deleting the other part's keys.

The factories live beside their classes (`kseq.models.encoders`,
`kseq.models.decoders`), which register them when `kseq.models` is imported.
`parts()` lists both catalogs (for `kseq presets --parts`).

Example:
>>> import kseq
>>> from kseq.models import part_catalog
>>> "transformer" in part_catalog.encoder_names("text"), part_catalog.decoder_names()[:2]
(True, ('transformer', 'rnn'))
>>> decoder = part_catalog.build_decoder("attention", 10, units=8, embedding_dim=4)
>>> type(decoder).__name__, decoder.name, decoder.attention
('RnnDecoder', 'decoder', 'bahdanau')
"""

import inspect

from kseq.arguments import check_choice
from kseq.errors import KseqError

ENCODER_KINDS = ("text", "image")
# Arguments every factory takes that are not a recipe's options.
_NOT_OPTIONS = ("vocabulary_size", "dtype", "name")

_ENCODERS = {}
_DECODERS = {}


class PartEntry:
    """One registered factory: its name, kind ("text", "image" or "decoder"), the class
    it builds, and the options it takes (read from its signature)."""

    def __init__(self, name, kind, factory, builds):
        self.name, self.kind, self.factory, self.builds = name, kind, factory, builds
        skip = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        #: `{option: default}` in the factory's order.
        self.options = {option: p.default
                        for option, p in inspect.signature(factory).parameters.items()
                        if option not in _NOT_OPTIONS and p.kind not in skip}

    def takes(self, option):
        return option in self.options

    def build(self, vocabulary_size, dtype=None, **options):
        """The part, named after its role ("encoder" or "decoder")."""
        role = "decoder" if self.kind == "decoder" else "encoder"
        return self.factory(vocabulary_size, dtype=dtype, name=role, **options)

    def __repr__(self):
        return f"PartEntry({self.name!r}, {self.kind!r}, {self.builds.__name__})"


def _register(catalog, name, kind, builds):
    def register(factory):
        if name in catalog:
            raise KseqError(f"A part named {name!r} is already registered. Received: "
                            f"{factory.__module__}.{factory.__name__}")
        catalog[name] = PartEntry(name, kind, factory, builds)
        return factory
    return register


def register_encoder(name, kind="text", builds=None):
    """Registers `factory(vocabulary_size, **options) -> encoder` under `name`.

    Args:
        name: the recipe's `model.encoder` value.
        kind: "text" (token ids in) or "image" (pixels in; `vocabulary_size` is None).
        builds: the class the factory returns (listed by `parts()`).
    """
    check_choice("kind", kind, ENCODER_KINDS)
    return _register(_ENCODERS, name, kind, builds)


def register_decoder(name, builds=None):
    """Registers `factory(vocabulary_size, **options) -> decoder` under `name`
    (the recipe's `model.decoder` value)."""
    return _register(_DECODERS, name, "decoder", builds)


def encoder_names(kind=None):
    """Registered encoder names (of one `kind`, "text" or "image", if given)."""
    return tuple(name for name, entry in _ENCODERS.items() if kind in (None, entry.kind))


def decoder_names():
    return tuple(_DECODERS)


def encoder_entry(name, choices=None):
    """The registered encoder `name`; `KseqError` if it is not one of `choices` (default:
    every registered encoder)."""
    return _entry(_ENCODERS, "encoder", name, choices)


def decoder_entry(name, choices=None):
    return _entry(_DECODERS, "decoder", name, choices)


def _entry(catalog, role, name, choices):
    check_choice(role, name, [c for c in (catalog if choices is None else choices)
                              if c in catalog])
    return catalog[name]


def build_encoder(name, vocabulary_size, dtype=None, **options):
    return encoder_entry(name).build(vocabulary_size, dtype=dtype, **options)


def build_decoder(name, vocabulary_size, dtype=None, **options):
    return decoder_entry(name).build(vocabulary_size, dtype=dtype, **options)


def known_options():
    """Every option some registered part takes."""
    return {option for catalog in (_ENCODERS, _DECODERS) for entry in catalog.values()
            for option in entry.options}


def split_options(options, entries, fixed=None, defaults=None):
    """A recipe's flat `options` -> one dict of keyword options per entry of `entries`.

    Each part gets the options it takes: the value in `options`, else in
    `defaults` (a task's own defaults, where they differ from the factory's),
    and the values its dict in `fixed` sets (one dict per entry: what the task
    decides itself, such as the lengths its preprocessor holds).

    Raises:
        TypeError: for an option that no registered part takes, or one that the
            task sets itself (a key of `fixed`).
    """
    fixed = list(fixed or [{}] * len(entries))
    defaults = defaults or {}
    reserved = set().union(*fixed)
    unknown = sorted((set(options) - known_options()) | (set(options) & reserved))
    if unknown:
        takes = sorted(set().union(*(entry.options for entry in entries)) - reserved)
        raise TypeError(f"Unexpected model option(s) {unknown}: the parts "
                        f"{[entry.name for entry in entries]} take {takes}. "
                        f"Received: {', '.join(f'{k}={options[k]!r}' for k in unknown)}")
    return [{k: v for k, v in {**defaults, **options, **own}.items() if entry.takes(k)}
            for entry, own in zip(entries, fixed)]


def parts():
    """Both catalogs: one dict per part, `{"name", "kind", "class", "options"}` (the
    options it takes with their defaults), encoders first."""
    return [{"name": entry.name, "kind": entry.kind,
             "class": entry.builds.__name__ if entry.builds else "-",
             "options": entry.options}
            for catalog in (_ENCODERS, _DECODERS) for entry in catalog.values()]


def parts_table():
    """`parts()` as text lines: name, kind, class, then `option=default` pairs."""
    lines = [f"{'part':18s} {'kind':8s} {'class':19s} options (None: derived, see the factory)"]
    for part in parts():
        options = " ".join(f"{k}={v!r}" for k, v in part["options"].items())
        lines.append(f"{part['name']:18s} {part['kind']:8s} {part['class']:19s} {options}")
    return lines
