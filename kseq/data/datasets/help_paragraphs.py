"""Text of the `par_id…` / `hd_id…` elements of LibreOffice help pages.

The English and translated help trees have the same files and the same
element ids, so paragraphs align by `(relative path, id)`.
"""

import html.parser
import os
import re

ID_PATTERN = re.compile(r"^(par_id|hd_id)")
SPACES = re.compile(r"\s+")


def collapse_spaces(text):
    """One space for each run of whitespace, none at the ends."""
    return SPACES.sub(" ", text).strip()


class _ParagraphCollector(html.parser.HTMLParser):
    """Collects the text inside elements whose id starts with `par_id` or `hd_id`.

    Nested markup (links, emphasis) is flattened into the paragraph's text; the
    first element with a given id wins.
    """

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.paragraphs = {}
        self._open = None  # (id, tag, depth, pieces)

    def handle_starttag(self, tag, attrs):
        if self._open is not None:
            ident, open_tag, depth, pieces = self._open
            if tag == open_tag:
                self._open = (ident, open_tag, depth + 1, pieces)
            return
        ident = dict(attrs).get("id") or ""
        if ID_PATTERN.match(ident) and ident not in self.paragraphs:
            self._open = (ident, tag, 1, [])

    def handle_endtag(self, tag):
        if self._open is None:
            return
        ident, open_tag, depth, pieces = self._open
        if tag != open_tag:
            return
        if depth > 1:
            self._open = (ident, open_tag, depth - 1, pieces)
            return
        text = collapse_spaces("".join(pieces))
        if text:
            self.paragraphs[ident] = text
        self._open = None

    def handle_data(self, data):
        if self._open is not None:
            self._open[3].append(data)


def read_help_page(path):
    """`{element id: text}` of one help page. Raises `ValueError` when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as handle:
            markup = handle.read()
        collector = _ParagraphCollector()
        collector.feed(markup)
        collector.close()
    except (OSError, UnicodeDecodeError, AssertionError) as error:
        raise ValueError(f"Unreadable help page ({error}). Received: {path}") from None
    if "<html" not in markup.lower():
        raise ValueError(f"Not an HTML page. Received: {path}")
    return collector.paragraphs


def help_pages(tree):
    """Sorted relative paths of the `.html` files under `tree`."""
    pages = []
    for folder, _, files in os.walk(tree):
        pages += [os.path.relpath(os.path.join(folder, f), tree) for f in files
                  if f.endswith(".html")]
    return sorted(pages)


def aligned_help_paragraphs(english_tree, foreign_tree, progress=None):
    """Aligned `(english, foreign)` paragraphs of two help trees, in sorted page order.

    Returns `(pairs, skipped)`: `skipped` counts pages that were missing on the
    foreign side or could not be parsed on either side.
    """
    pairs, skipped = [], 0
    pages = help_pages(english_tree)
    for index, page in enumerate(pages, 1):
        if progress and (index % 500 == 0 or index == len(pages)):
            progress(f"help pages {index}/{len(pages)}")
        try:
            english = read_help_page(os.path.join(english_tree, page))
            foreign = read_help_page(os.path.join(foreign_tree, page))
        except (ValueError, FileNotFoundError):
            skipped += 1
            continue
        pairs += [(text, foreign[ident]) for ident, text in english.items() if ident in foreign]
    return pairs, skipped
