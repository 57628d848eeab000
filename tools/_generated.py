"""The command line the generators share: write a generated file, or with ``--check`` say
whether the committed one is current."""
import sys

__all__ = ["write_or_check"]


def write_or_check(generate, out, tool, argv=None):
    """Write ``generate()`` to ``out``; with ``--check`` in ``argv`` write nothing and
    return 1 (saying so) when ``out`` differs from it."""
    argv = sys.argv[1:] if argv is None else argv
    text = generate()
    if "--check" in argv:
        with open(out, encoding="utf-8") as fh:
            if fh.read() != text:
                print(f"{out} is stale: run `python tools/{tool}`")
                return 1
        return 0
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(text)
    return 0
