#!/usr/bin/env python3
"""Checks an ampscope HTML report: well-formed and self-contained.

Usage: check_html_report.py REPORT.html

- html5lib (when installed) parses it in strict mode;
- Python's html.parser walks it with a strict open/close balance check: every
  element closed in order (void elements must be self-closed, as the report writes them);
- xml.etree parses it as XML (the report promises well-formed markup);
- no reference to anything outside the file: no http(s)://, protocol-relative URL,
  @import, url(), src= or href= to elsewhere, <script>, <link>, <img>, <iframe>.
Prints one line per problem and exits 1 if there is any; only the standard library is needed.
"""
import html.parser
import re
import sys
import xml.etree.ElementTree as ET

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
FORBIDDEN = [
    (re.compile(r"https?:", re.I), "an http(s) URL"),
    (re.compile(r"//cdn", re.I), "a CDN reference"),
    (re.compile(r"@import", re.I), "a CSS @import"),
    (re.compile(r"url\(", re.I), "a CSS url()"),
    (re.compile(r"\bsrc\s*=", re.I), "a src attribute"),
    (re.compile(r"\bhref\s*=\s*[\"']?(?!#)", re.I), "a link to another resource"),
    (re.compile(r"<\s*(script|link|img|iframe|object|embed)\b", re.I), "an element that loads something"),
    (re.compile(r"\b(x|y|x1|x2|y1|y2|width|height|d|viewBox|transform)=\"[^\"]*(nan|inf)", re.I),
     "a NaN or inf in SVG geometry"),
]


class Balance(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.problems = []

    def where(self):
        line, col = self.getpos()
        return f"line {line} col {col}"

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            self.problems.append(f"{self.where()}: <{tag}> is not self-closed")
            return
        self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        if not self.stack:
            self.problems.append(f"{self.where()}: </{tag}> closes nothing")
        elif self.stack[-1] != tag:
            self.problems.append(f"{self.where()}: </{tag}> closes <{self.stack[-1]}>")
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
        else:
            self.stack.pop()


def check(text):
    problems = []
    for pattern, what in FORBIDDEN:
        m = pattern.search(text)
        if m:
            start = max(0, m.start() - 40)
            problems.append(f"contains {what}: ...{text[start:m.end() + 40]!r}...")
    b = Balance()
    b.feed(text)
    b.close()
    problems += b.problems
    if b.stack:
        problems.append(f"unclosed at the end: {b.stack}")
    try:
        ET.fromstring(re.sub(r"^<!DOCTYPE html>", "", text.lstrip(), flags=re.I))
    except ET.ParseError as e:
        problems.append(f"not well-formed XML: {e}")
    try:
        import html5lib  # optional
    except ImportError:
        html5lib = None
    if html5lib is not None:
        try:
            html5lib.HTMLParser(strict=True).parse(text)
        except Exception as e:  # html5lib raises ParseError subclasses
            problems.append(f"html5lib: {e}")
    return problems


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    problems = check(text)
    for p in problems:
        print(p)
    if not problems:
        print("ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
