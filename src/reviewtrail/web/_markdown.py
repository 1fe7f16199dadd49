"""Candidate responses drawn as markdown on the Review page, on the server (docs/human-review.md,
"The inspector"): no script and no markdown library in the browser, and nothing the page's CSP
would have to allow.

CommonMark with GFM tables and strikethrough (markdown-it-py), raw HTML off: a ``<script>`` in a
response is text. Links keep their target but carry ``rel="noopener noreferrer nofollow"``, so
following one tells the other site nothing of the page; an image is never loaded (the CSP would
refuse it anyway): it is drawn as text naming its address. markdown-it-py already refuses
``javascript:``, ``vbscript:``, ``file:`` and ``data:`` link targets. A response's headings sit
under the page's own (``#`` is drawn as ``<h4>``); a code block and a table, which scroll sideways
when wide, take the keyboard's focus.

:func:`exact_text` is the response's exact characters for the page's "raw" view: escaped, with
each carriage return written as a character reference, since an HTML parser turns a literal one
into a line feed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markupsafe import Markup, escape

__all__ = ["exact_text", "render_markdown"]

LINK_REL = "noopener noreferrer nofollow"
HEADING_SHIFT = 3  # a response's "# title" is an h4, under the page's h3 "Candidate A"


def _link_open(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    tokens[idx].attrSet("rel", LINK_REL)
    return renderer.renderToken(tokens, idx, options, env)


def _heading(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    token.tag = f"h{min(6, int(token.tag[1:]) + HEADING_SHIFT)}"
    return renderer.renderToken(tokens, idx, options, env)


def _focusable_pre(default: Callable[..., str]) -> Callable[..., str]:
    """markdown-it's ``default`` code rule with ``tabindex="0"`` on its ``<pre>``, which scrolls
    sideways when a line is wide: a keyboard reaches what is past its edge."""

    def draw(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        return default(renderer, tokens, idx, options, env).replace("<pre>", '<pre tabindex="0">', 1)

    return draw


def _table_open(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    tokens[idx].attrSet("tabindex", "0")  # a wide table scrolls sideways too
    return renderer.renderToken(tokens, idx, options, env)


def _image(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    alt = "".join(child.content for child in token.children or ())
    src = str(token.attrGet("src") or "")
    return f'<span class="md-image">[image{": " if alt else ""}{escape(alt)} · {escape(src)}]</span>'


def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("image", _image)
    for rule in ("heading_open", "heading_close"):
        md.add_render_rule(rule, _heading)
    md.add_render_rule("fence", _focusable_pre(RendererHTML.fence))
    md.add_render_rule("code_block", _focusable_pre(RendererHTML.code_block))
    md.add_render_rule("table_open", _table_open)
    return md


_MD = _renderer()


def render_markdown(text: str) -> Markup:
    """``text`` drawn as HTML: markdown with raw HTML off (any tag in it is shown as text)."""
    return Markup(_MD.render(text))  # noqa: S704 (markdown-it escapes every text and attribute; html is off)


def exact_text(text: str) -> Markup:
    """``text`` escaped for a ``<pre>``, every character kept as the browser reads it back
    (``textContent``): carriage returns as ``&#13;``, and a line feed put first, which the parser
    drops after ``<pre>`` (so a response's own leading line feed is kept)."""
    escaped = str(escape(text)).replace("\r", "&#13;")
    return Markup("\n" + escaped)  # noqa: S704 (escaped above)
