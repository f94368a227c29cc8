r"""Noto Color Emoji glyphs -> square RGBA PNGs, drawn with Pillow.

`NotoColorEmoji.ttf` is a CBDT font: colour bitmaps in one strike, which
FreeType opens at size 109 only (other sizes raise "invalid pixel size").
Each glyph is a 136 x 128 cell; it is drawn centred on a transparent
136 x 136 square and scaled to `image_size` (anti-aliased, alpha kept).

An emoji renders only when the font has a glyph for its whole code-point
sequence. Pillow's raqm layout (HarfBuzz shaping) joins a sequence the font
knows (skin tones, ZWJ families, flags) into one glyph; one the font does not
know comes out as two or more glyphs (a person and a colour swatch) or as an
empty `.notdef` box. So a sequence counts as rendered when it advances by
exactly one cell and draws some ink; anything else is skipped. Without raqm,
Pillow's basic layout would draw every ZWJ sequence as its parts, so it is
refused instead of giving a different set on another machine.

Example (a plain Pillow font stands in for the emoji font):
>>> from PIL import Image, ImageFont
>>> import io
>>> from kseq.data.datasets.emoji_rendering import render_glyph
>>> font = ImageFont.load_default(40)
>>> png = render_glyph(font, "A", 24, advance=font.getlength("A"))
>>> Image.open(io.BytesIO(png)).size, Image.open(io.BytesIO(png)).mode
((24, 24), 'RGBA')
>>> render_glyph(font, "AB", 24, advance=font.getlength("A")) is None  # two glyphs
True
"""

from kseq.data.datasets.rendered_image_sets import fit_square, pillow, png_bytes
from kseq.errors import KseqError

FONT_FILE = "usr/share/fonts/truetype/noto/NotoColorEmoji.ttf"  # inside the Debian package
FONT_SIZE = 109  # the font's one bitmap strike
REFERENCE = "\U0001F600"  # grinning face: in every version of the font, one cell wide
_ADVANCE_TOLERANCE = 0.5  # pixels: the advance of one cell, never half of two


def load_emoji_font(path):
    """The Pillow font of `NotoColorEmoji.ttf` at `path`, laid out with raqm."""
    _, _, ImageFont = pillow("emoji_captions")
    from PIL import features

    if not features.check("raqm"):
        raise KseqError(
            "emoji_captions needs Pillow built with raqm (libraqm, with HarfBuzz and FriBiDi) to "
            "join skin-tone and ZWJ sequences into one glyph; Pillow's basic layout draws them "
            "as their parts. Install libraqm0 / libfribidi0 (apt) or a Pillow wheel that bundles "
            f"raqm. Received: Pillow {features.version('pil')} without raqm")
    try:
        return ImageFont.truetype(path, FONT_SIZE, layout_engine=ImageFont.Layout.RAQM)
    except OSError as error:
        raise KseqError(f"{path} should be Noto Color Emoji (a CBDT font Pillow opens at size "
                        f"{FONT_SIZE}); delete its folder to fetch it again. Received: {error}"
                        ) from None


def render_emoji(font, sequence, image_size):
    """PNG bytes (RGBA, `image_size` square) of `sequence` in the emoji font, or None when
    the font has no single glyph for it."""
    return render_glyph(font, sequence, image_size, advance=font.getlength(REFERENCE))


def render_glyph(font, text, image_size, advance):
    """PNG bytes of `text` drawn as one glyph `advance` pixels wide, or None if it is not one.

    The glyph's box is centred on a transparent square as wide as the box's
    longest side, so every glyph of a font is scaled alike (a flag keeps its
    margins instead of being blown up).
    """
    Image, ImageDraw, _ = pillow("emoji_captions")
    left, top, right, bottom = font.getbbox(text)
    if abs(font.getlength(text) - advance) > _ADVANCE_TOLERANCE or right <= left or bottom <= top:
        return None
    side = max(right - left, bottom - top)
    canvas = Image.new("RGBA", (side, side), (0, 0, 0, 0))
    origin = ((side - (right - left)) // 2 - left, (side - (bottom - top)) // 2 - top)
    # Colour bitmaps ignore `fill`; black keeps a monochrome glyph visible on white.
    ImageDraw.Draw(canvas).text(origin, text, font=font, fill=(0, 0, 0, 255), embedded_color=True)
    if canvas.getchannel("A").getbbox() is None:
        return None  # an empty box: no ink at all
    return png_bytes(fit_square(canvas, image_size))
