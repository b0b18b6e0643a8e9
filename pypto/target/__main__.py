"""``python -m pypto.target [FILE|-|NAME]``: parse, verify and print a target description.

Reads a target file (``-`` for stdin; default: the packaged ``a2a3``), verifies
it and prints it in the ``npu`` dialect's custom syntax. Errors go to stderr
with exit status 1. Used by the lit tests (``test/device``); ``python -m pypto.device`` is the same command.
"""

from __future__ import annotations

import sys

from pypto.utils.cli import cli_main, read_input_text

from .model import parse_target_op, print_target_op, target_path


@cli_main("python -m pypto.target")
def main(argv: list[str] | None = None) -> int:
    """Print the verified target named by ``argv[0]``."""
    args = sys.argv[1:] if argv is None else argv
    arg = args[0] if args else "a2a3"
    if arg == "-":
        op = parse_target_op(read_input_text("-", "target file"), "<stdin>")
    else:
        op = parse_target_op(read_input_text(target_path(arg), "target file"), str(arg))
    sys.stdout.write(print_target_op(op))
    return 0


if __name__ == "__main__":
    sys.exit(main())
