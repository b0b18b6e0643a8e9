"""``debug/run.py`` of a build directory: re-run the build with no source at hand.

``python build_output/<dir>/debug/run.py [replay flags]`` calls :func:`pypto.runtime.debug.replay_main` on its
own build directory. With a ``golden.py`` the inputs come from it and the outputs are checked against it;
otherwise the inputs come from ``make_inputs()`` (the recorded shapes and dtypes, editable) and the
``_user_compare()`` hook runs after the replay. The text depends on the metadata only (deterministic).
"""

from __future__ import annotations

from ..build_dir import BuildMeta
from ..golden_file import inputs_source


def run_script_text(meta: BuildMeta, l3: bool = False) -> str:
    """The text of ``debug/run.py`` for a build with metadata ``meta`` (``l3``: an L3 build, whose units are in
    its ``next_levels/<name>/`` sub-builds)."""
    names = [p.name for p in meta.params]
    outputs = [p.name for p in meta.params if p.is_output]
    where = "next_levels/<name>/" if l3 else ""
    return "\n".join([
        '"""Re-run this build on the simulated chip: python debug/run.py [--pmu N] [--swimlane] ... (--help).',
        "",
        f"Edit {where}ptoas/<unit>.pto (or {where}kernels/<core>/<func>.cpp) and run this again: the edited .pto is",
        "re-assembled, spliced into the kernel C++, run, and dfx_outputs/ written afresh. Without golden.py the",
        "inputs come from make_inputs() (edit freely) and _user_compare() runs after the replay.",
        "Written by pypto.runtime.debug.run_script.",
        '"""',
        "",
        "import sys",
        "from pathlib import Path",
        "",
        "import torch",
        "",
        "from pypto.runtime.debug import replay_main",
        "",
        "BUILD_DIR = Path(__file__).resolve().parent.parent",
        f"PLATFORM = {meta.platform!r}",
        "",
        "",
        inputs_source(meta, "make_inputs").rstrip("\n"),
        "",
        "",
        f"def _user_compare({', '.join(names)}):",
        f'    """Called after a replay that did not validate against golden.py; outputs: {", ".join(outputs) or "none"}."""',
        "",
        "",
        'if __name__ == "__main__":',
        "    sys.exit(replay_main([str(BUILD_DIR), *sys.argv[1:]], inline_inputs=make_inputs, user_compare=_user_compare,",
        "                         default_platform=PLATFORM))",
        "",
    ])
