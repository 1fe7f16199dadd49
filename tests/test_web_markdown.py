"""Candidates drawn as markdown on the server (reviewtrail.web._markdown): raw HTML off, links that
tell the other site nothing, no image loaded, headings under the page's own, and the raw view's
exact characters."""

from __future__ import annotations

import html
import re

from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.web._markdown import LINK_REL, exact_text, render_markdown

# Every tag markdown-it-py draws for CommonMark with tables and strikethrough, headings shifted.
ALLOWED = {
    "p", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li", "a", "hr", "br", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "s", "span",
}  # fmt: skip
TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>")
PIECES = st.sampled_from(
    [
        "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<iframe src=//e>", "# ", "## ", "```\n",
        "`", "*", "_", "[a](http://e.com/x)", "[j](javascript:alert(1))", "![i](http://e.com/t.png)", "\n",
        "\r\n", "| a | b |\n|---|---|\n| 1 | 2 |\n", "<", ">", "&", '"', "<a href=x>", "~~s~~", "> q\n", "- l\n",
        "<div onclick=x>", "<!-- c -->", "<?php ?>", "x" * 50,
    ]
)  # fmt: skip
TEXTS = st.lists(st.one_of(PIECES, st.text(max_size=20)), max_size=30).map("".join)


@given(TEXTS)
def test_no_response_draws_a_tag_markdown_does_not_make(text: str) -> None:
    drawn = str(render_markdown(text))
    for closing, name, attributes in TAG.findall(drawn):
        assert name.lower() in ALLOWED, (name, drawn)
        assert not re.search(r"\son[a-z]+=", attributes), drawn  # no event handler
        if name == "a" and not closing:
            assert f'rel="{LINK_REL}"' in attributes and "javascript:" not in attributes.lower(), drawn
        if name == "span" and not closing:
            assert attributes == ' class="md-image"', drawn


@given(st.text())
def test_the_raw_view_keeps_every_character(text: str) -> None:
    shown = str(exact_text(text))
    assert "\r" not in shown and "<" not in shown  # a parser keeps them as written
    assert shown.startswith("\n")  # the line feed a parser drops after <pre>
    assert html.unescape(shown) == "\n" + text


def test_markdown_is_drawn_and_html_in_it_is_text() -> None:
    drawn = str(
        render_markdown("# Title\n\n```py\nx = 1\n```\n\n<script>alert(1)</script>\n\n![t](http://e.com/t.png)")
    )
    assert "<h4>Title</h4>" in drawn
    assert '<pre tabindex="0"><code class="language-py">x = 1\n</code></pre>' in drawn
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in drawn and "<script" not in drawn
    assert '<span class="md-image">[image: t · http://e.com/t.png]</span>' in drawn and "<img" not in drawn
    assert str(render_markdown("[p](https://e.com)")) == f'<p><a href="https://e.com" rel="{LINK_REL}">p</a></p>\n'
