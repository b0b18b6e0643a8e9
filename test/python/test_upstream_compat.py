"""The upstream-compatibility runner on a tiny synthetic checkout (no upstream files needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pypto.tools.upstream_compat import example_modules, main, manual_blocks

PAGE = """# A page

<!-- doctest: setup -->
```python
import pypto
PLATFORM = "__PLATFORM__"
```

Unmarked blocks are not run:

```python
raise SystemExit(3)
```

<!-- doctest: run -->
```python
assert PLATFORM == "a2a3sim", PLATFORM
assert pypto.__name__ == "pypto"
```

<!-- doctest: run -->
```python
raise ValueError("second block fails")
```
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """One passing example, one failing, a nested helper, one that prints upstream's "skipped (needs ...)",
    a failing distributed one, one manual page."""
    root = tmp_path / "upstream"
    for folder in ("beginner", "distributed", "runtime", "models", "models/pkg"):
        (root / "examples" / folder).mkdir(parents=True)
        (root / "examples" / folder / "__init__.py").write_text("")
    (root / "examples" / "__init__.py").write_text("")
    (root / "examples/beginner/01_ok.py").write_text(
        "import pypto\nopen('build_output.txt', 'w').write('x')\nprint('ok')\n"
    )  # its build output goes to the working folder
    (root / "examples/beginner/02_bad.py").write_text("import pypto.nonexistent_module_xyz\n")
    (root / "examples/distributed/01_rank.py").write_text("raise SystemExit(1)\n")
    (root / "examples/runtime/dist.py").write_text("print('skipped (needs a device + simpler runtime): X')\n")
    (root / "examples/models/pkg/helper.py").write_text("raise SystemExit(1)\n")
    (root / "examples/models/pkg/main.py").write_text("if __name__ == '__main__':\n    print('nested')\n")
    (root / "docs/en/user").mkdir(parents=True)
    (root / "docs/en/user/page.md").write_text(PAGE)
    return root


def test_examples_found(checkout: Path) -> None:
    items = example_modules(checkout)
    assert [i.label for i in items] == [
        "examples.beginner.01_ok",
        "examples.beginner.02_bad",
        "examples.distributed.01_rank",
        "examples.models.pkg.main",
        "examples.runtime.dist",
    ]


def test_manual_blocks_get_setup_and_platform(checkout: Path) -> None:
    blocks = manual_blocks(checkout, "a2a3sim")
    assert [b.label for b in blocks] == ["docs/en/user/page.md:15", "docs/en/user/page.md:21"]
    assert blocks[0].script is not None
    assert blocks[0].script.startswith('import pypto\nPLATFORM = "a2a3sim"')
    assert "SystemExit(3)" not in blocks[0].script
    assert "__PLATFORM__" not in blocks[1].script


def test_counts_and_first_errors(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(checkout), "--timeout", "60"]) == 1
    out = capsys.readouterr().out
    assert "examples 2/5" in out
    assert "manual blocks 1/2" in out
    assert "FAIL examples.beginner.02_bad: ModuleNotFoundError: No module named 'pypto.nonexistent_module_xyz'" in out
    assert "FAIL docs/en/user/page.md:21: ValueError: second block fails" in out
    assert "FAIL examples.distributed.01_rank: " in out  # counted since session 24
    assert "FAIL examples.runtime.dist: skipped (needs a device + simpler runtime): X" in out  # exit 0, not run
    assert not (checkout / "build_output.txt").exists()  # items run in a temporary folder, not the checkout


def test_not_a_checkout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path)]) == 1  # a user error, through the shared CLI wrapper
    err = capsys.readouterr().err
    assert err.startswith("upstream_compat: error: ") and "no examples/ folder" in err and "internal error" not in err
