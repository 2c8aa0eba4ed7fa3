#!/usr/bin/env python3
"""Every link between the docs resolves where the pages lie: the .deb's layout.

  doc_links.py DOCDIR     exit 1 and one line per link that would dangle

DOCDIR holds the pages as installed (README.md, docs/...). Each relative link
in a page must lead to a file under DOCDIR: a link into the source tree
(tests/, cmd/, lib/, DEVELOPERS.md) dangles in the .deb, so name such a file
as code (`tests/crio/crio_nvidia_test.cc`) instead. A link's #anchor must be a
heading of the page it leads to, slugged as GitHub slugs headings.
"""
import os
import re
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    """The anchors of a page's headings, outside code blocks; a repeat gets -1, -2..."""
    found, counts, in_code = set(), {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                in_code = not in_code
                continue
            m = None if in_code else HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(1))
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(path):
    """(line number, target) of every link outside code blocks and code spans."""
    in_code = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                in_code = not in_code
                continue
            if in_code:
                continue
            for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
                yield n, m.group(1)


def check(docdir):
    failures, checked, cache = [], 0, {}
    for root, _, files in os.walk(docdir):
        for name in sorted(files):
            if not name.endswith(".md"):
                continue
            page = os.path.join(root, name)
            rel = os.path.relpath(page, docdir)
            for n, target in links(page):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                    continue
                checked += 1
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(root, path)) if path else page
                where = os.path.relpath(dest, docdir)
                if where.startswith(".."):
                    failures.append(f"{rel}:{n}: {target} leads out of the installed docs"
                                    " (name a source file as code, not as a link)")
                    continue
                if not os.path.exists(dest):
                    failures.append(f"{rel}:{n}: {target}: {where} is not installed"
                                    " (a source file: name it as code, not as a link)")
                    continue
                if anchor and dest.endswith(".md"):
                    if dest not in cache:
                        cache[dest] = anchors(dest)
                    if anchor not in cache[dest]:
                        failures.append(f"{rel}:{n}: {target}: {where} has no heading #{anchor}")
    return checked, failures


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: doc_links.py DOCDIR")
    checked, failures = check(sys.argv[1])
    for f in failures:
        print(f"doc_links: FAIL: {f}", file=sys.stderr)
    print(f"doc_links: {checked} link(s) checked, {len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
