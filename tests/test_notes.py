"""Every ``NOTE [X]`` referenced in wgrad/, tests/ or docs/ is defined somewhere as a
``# NOTE [X]`` block header (a comment line holding only the title)."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRS = ("wgrad", "tests", "docs")
SUFFIXES = (".py", ".pyi", ".md")

_HEADER = re.compile(r"^\s*# NOTE \[([^\]]+)\]\s*$", re.M)
_COMMENT_START = re.compile(r"^\s*#+ ?", re.M)
_REFERENCE = re.compile(r"NOTE\s+\[([^\]]+)\]")


def _files():
    for d in DIRS:
        for base, _, names in os.walk(os.path.join(ROOT, d)):
            for name in names:
                path = os.path.join(base, name)
                if name.endswith(SUFFIXES) and path != os.path.abspath(__file__):
                    with open(path, encoding="utf-8") as fh:
                        yield os.path.relpath(path, ROOT), fh.read()


def _titles(text):
    """Reference titles, a title broken over comment or markdown lines joined again."""
    flat = _COMMENT_START.sub("", text)
    return {" ".join(t.split()) for t in _REFERENCE.findall(flat)}


def _scan():
    defined, referenced = {}, {}
    for path, text in _files():
        for title in _HEADER.findall(text):
            defined.setdefault(title, path)
        for title in _titles(text):
            referenced.setdefault(title, path)
    return defined, referenced


def test_every_referenced_note_is_defined():
    defined, referenced = _scan()
    missing = sorted(f"NOTE [{t}] (in {p})" for t, p in referenced.items() if t not in defined)
    assert missing == []


def test_the_scan_finds_notes_and_broken_titles():
    defined, _ = _scan()
    assert "Conjugate Wirtinger convention" in defined
    assert _titles("x  # (NOTE [Recording\n    # cost])") == {"Recording cost"}
    assert _titles("see NOTE\n[Fast path] here") == {"Fast path"}


def test_architecture_md_indexes_every_note_where_it_is_defined():
    """docs/architecture.md's NOTE table names each note of wgrad/ and its file."""
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as fh:
        rows = dict(re.findall(r"^\| ([^|]+?) \| (wgrad/[^ |]+) \|$", fh.read(), re.M))
    defined, _ = _scan()
    in_wgrad = {t: p for t, p in defined.items() if p.startswith("wgrad" + os.sep)}
    assert {t: rows.get(t) for t in in_wgrad} == {t: p.replace(os.sep, "/")
                                                  for t, p in in_wgrad.items()}
