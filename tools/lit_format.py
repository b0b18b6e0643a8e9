"""The lit test format of the repository (used by ``lit.cfg.py``).

It lives in an importable module because lit pickles the format to hand tests
to its worker processes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import lit.formats


class RepoTests(lit.formats.ShTest):
    """ShTest that looks for tests only under ``test/``, outside ``test/python``
    (the pytest tests) and ``Inputs`` folders. The suite root is the repository
    root, so ``lit test``, ``lit test/opt`` and ``lit test/opt/x.mlir`` all work."""

    def getTestsInDirectory(  # noqa: N802 (lit's API)
        self, testSuite: Any, path_in_suite: tuple[str, ...], litConfig: Any, localConfig: Any
    ) -> Iterator[Any]:
        """Tests in one directory, if it is a test directory."""
        if not path_in_suite or path_in_suite[0] != "test":
            return
        if path_in_suite[:2] == ("test", "python") or "Inputs" in path_in_suite:
            return
        yield from super().getTestsInDirectory(testSuite, path_in_suite, litConfig, localConfig)
