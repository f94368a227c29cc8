r"""SVG files -> RGBA Pillow images with `cairosvg`, when it is installed and finds cairo.

`cairosvg` (LGPL-3.0) is optional: it needs the system cairo library, which
`cairocffi` looks for when it is imported (an `OSError`, not an
`ImportError`, when it is absent), so `svg_renderer()` returns None instead of
failing and builders skip SVG-only sources with a count.

cairosvg parses in its safe mode (`defusedxml`: no entities, no external
files). Some drawing programs (Illustrator) declare their namespaces as
internal entities (`<!ENTITY ns_svg "http://www.w3.org/2000/svg">`), which
that mode refuses; `expand_internal_entities` substitutes them and drops the
DOCTYPE first, so such files render without turning the safe mode off.

Example:
>>> from kseq.data.datasets.svg_rendering import expand_internal_entities
>>> svg = (b'<!DOCTYPE svg [<!ENTITY ns "http://www.w3.org/2000/svg">]>'
...        b'<svg xmlns="&ns;"/>')
>>> expand_internal_entities(svg)
b'<svg xmlns="http://www.w3.org/2000/svg"/>'
"""

import io
import re

from kseq.data.datasets.rendered_image_sets import pillow

_DOCTYPE = re.compile(rb"<!DOCTYPE[^\[>]*(\[.*?\])?\s*>", re.S)
_ENTITY = re.compile(rb"<!ENTITY\s+([A-Za-z_][\w.-]*)\s+(?:\"([^\"]*)\"|'([^']*)')\s*>")


def svg_renderer():
    """The `cairosvg` module, or None when it is not installed or cairo is missing."""
    try:
        import cairosvg
    except (ImportError, OSError):  # cairocffi raises OSError without libcairo
        return None
    return cairosvg


def svg_renderer_version():
    """`"cairosvg <version>"`, or None without a renderer."""
    renderer = svg_renderer()
    return None if renderer is None else f"cairosvg {getattr(renderer, '__version__', '?')}"


def expand_internal_entities(data):
    """SVG bytes with the DOCTYPE's internal `<!ENTITY name "value">`s substituted and the
    DOCTYPE removed (values are used as written: no nested entities)."""
    match = _DOCTYPE.search(data)
    if match is None:
        return data
    entities = {name: double or single
                for name, double, single in _ENTITY.findall(match.group(0))}
    data = data[:match.start()] + data[match.end():]
    for name, value in entities.items():
        data = data.replace(b"&" + name + b";", value)
    return data


def render_svg(path, longest_side):
    """The SVG file at `path` as an RGBA Pillow image whose longest side is at least
    `longest_side` (drawn at its own size, and again larger when that is smaller);
    raises `ValueError` / `OSError` for a file it cannot render."""
    Image, _, _ = pillow("render_svg")
    renderer = svg_renderer()
    if renderer is None:
        raise OSError("cairosvg is not available (pip install cairosvg; it needs libcairo)")
    with open(path, "rb") as handle:
        data = expand_internal_entities(handle.read())
    image = Image.open(io.BytesIO(renderer.svg2png(bytestring=data)))
    if max(image.size) < longest_side:  # vector art: draw it big rather than upscale pixels
        scale = longest_side / max(image.size)
        image = Image.open(io.BytesIO(renderer.svg2png(bytestring=data, scale=scale)))
    image.load()
    return image.convert("RGBA")
