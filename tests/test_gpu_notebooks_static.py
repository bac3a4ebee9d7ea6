"""Every code cell of every GPU-tier notebook, checked statically on the CPU.

The GPU tier runs these notebooks in their container; here each cell is compared with the
schema snapshot of the notebook's track (specdec_guide.validate.notebook). A cell no checker
can read fails unless it says why with ``# specdec-guide: unchecked: <reason>``. Until a GPU
run is stored, a GPU notebook carries no outputs and its page says it was never run on a GPU.
A reader downloads one GPU notebook into the container it names and runs it there: no cell may
need this guide's checkout or package.
"""

from __future__ import annotations

import json
import re
import textwrap

import jupytext
import pytest

from site_build import ROOT
from specdec_guide.notebooks import list_notebooks, stale_outputs
from specdec_guide.validate.notebook import NotebookChecker

GPU_NOTEBOOKS = [i for i in list_notebooks(ROOT) if i.tier == "gpu"]
#: What a GPU run's stamp must record (notebooks.execute writes it on the GPU machine).
GPU_STAMP_KEYS = ("date", "where", "gpu", "driver", "container", "versions", "duration_s", "code_sha256")


@pytest.fixture(scope="module")
def checker():
    return NotebookChecker()


def test_there_are_gpu_notebooks():
    assert GPU_NOTEBOOKS, "no notebook declares specdec_guide.tier: gpu"


@pytest.mark.parametrize("info", GPU_NOTEBOOKS, ids=lambda i: i.source.name)
def test_every_code_cell_of_a_gpu_notebook_is_checked(info, checker):
    result = checker.check_source(info.source)
    print(result.summary())  # per-notebook counts: visible with -rP or -s
    problems = [str(d) for d in result.diagnostics(ROOT)]
    assert not problems, "\n".join(problems)
    assert result.checked, f"{info.source.name}: no code cell was checked"


@pytest.mark.parametrize("info", GPU_NOTEBOOKS, ids=lambda i: i.source.name)
def test_a_gpu_notebook_without_a_stamped_gpu_run_carries_no_outputs(info):
    nb = json.loads(info.paired.read_text(encoding="utf-8"))
    stamp = (nb.get("metadata", {}).get("specdec_guide") or {}).get("last_run")
    if stamp:
        missing = [k for k in GPU_STAMP_KEYS if k not in stamp]
        assert not missing, f"{info.paired.name}: the GPU run's stamp lacks {', '.join(missing)}"
        assert stale_outputs(info) is None
        return
    for i, cell in enumerate(nb["cells"], 1):
        if cell["cell_type"] == "code":
            assert not cell.get("outputs") and cell.get("execution_count") is None, (
                f"{info.paired.name}: cell {i} has outputs but no GPU run is stamped")


#: What ties a notebook to this guide's checkout or package, each with what to tell the author. The
#: first three hold in every cell (a markdown cell that says `pip install -e /guide` sends the reader
#: to the clone as well); the rest in code cells.
_NEEDS_THE_GUIDE = [
    (re.compile(r"\bpip3?\s+install\b[^\n]*?(?:\s-e\b|\s\.(?=\s|$)|specdec[-_]guide)"), "installs the guide's package"),
    (re.compile(r"(?<![\w.-])/guide\b"), "names the guide's checkout at /guide"),
    (re.compile(r"\bimport\s+specdec_guide\b|\bfrom\s+specdec_guide\b"), "imports the guide's package"),
]
_CODE_ONLY = [
    (re.compile(r"\bspecdec_guide\b"), "uses the guide's package (specdec_guide)"),
    (re.compile(r"(?<![\w-])specdec-guide\s+[a-z]"), "runs the guide's specdec-guide command"),
    (re.compile(r"\bGUIDE\b"), "names the guide's checkout (GUIDE)"),
    (re.compile(r"\b(?:templates_root|model_repo_templates)\b"), "copies the guide's templates"),
    (re.compile(r"Path\.cwd\(\)\.parent|\.\./(?:snippets|src|model_repo_templates|schemas)/"),
     "reads files of the checkout around the notebook"),
]


def needs_the_guide(source) -> list[str]:
    """Each line of a notebook that needs this guide's checkout or package, with why."""
    found = []
    for i, cell in enumerate(jupytext.read(source).cells, 1):
        checks = _NEEDS_THE_GUIDE + (_CODE_ONLY if cell.cell_type == "code" else [])
        for line in cell.source.splitlines():
            why = next((why for pattern, why in checks if pattern.search(line)), None)
            if why:
                found.append(f"{source.name}: cell {i} ({cell.cell_type}) {why}: {line.strip()}")
    return found


@pytest.mark.parametrize("info", GPU_NOTEBOOKS, ids=lambda i: i.source.name)
def test_a_gpu_notebook_needs_only_its_container(info):
    """Downloaded alone into the container its header names, a GPU notebook runs: no cell imports
    specdec_guide, runs specdec-guide, installs the guide or reads a file of its checkout."""
    found = needs_the_guide(info.source)
    assert not found, "\n".join(found)


def test_a_notebook_that_needs_the_guide_is_caught(tmp_path):
    """The check above can fail: each way back into the checkout is reported, and what a notebook
    legitimately writes (a tritonclient install, the checker's markers, the container-image variable) is not."""
    src = tmp_path / "nb.py"
    src.write_text(HEADER + "\n" + textwrap.dedent("""\
        # %% [markdown]
        # Install the guide first: `pip install --no-deps -e /guide`.

        # %%
        from specdec_guide.gpu_checks import report_greedy
        import specdec_guide.background
        GUIDE = templates_root().parents[1]
        text = (Path.cwd().parent / "snippets/triton/client_grpc_stream.py").read_text()

        # %%
        # %%bash
        python3 -m pip install -e .
        pip install specdec-guide
        specdec-guide repo render --method ngram --engine trtllm --out repo --force
        cp -r /guide/model_repo_templates/llmapi/ngram repo
        python3 -c "import specdec_guide"

        # %%
        # %%bash
        # specdec-guide: trtllm=1.1.0
        python3 -m pip install --quiet "tritonclient[grpc]==2.73.0"
        echo "$SPECDEC_GUIDE_CONTAINER_IMAGE" /app/all_models/llmapi
        """))
    found = needs_the_guide(src)
    assert len(found) == 10, "\n".join(found)
    assert not any("tritonclient" in f or "trtllm=1.1.0" in f or "SPECDEC_GUIDE_CONTAINER" in f for f in found), found
    for why in ("installs the guide's package", "names the guide's checkout at /guide", "imports the guide's package",
                "runs the guide's specdec-guide command", "names the guide's checkout (GUIDE)",
                "reads files of the checkout around the notebook"):
        assert any(why in f for f in found), why


def test_the_page_of_an_unrun_gpu_notebook_says_so():
    from specdec_guide.site.hooks import _banner

    banner = _banner({"tier": "gpu", "container": "c", "trtllm_version": "1.1.0"})
    assert "has not been run on a GPU" in banner
    ran = _banner({"tier": "gpu", "container": "c", "trtllm_version": "1.1.0", "last_run": {
        "date": "2026-12-01", "where": "h", "gpu": "NVIDIA H100", "driver": "580", "container": "c",
        "versions": {"tensorrt_llm": "1.1.0"}, "duration_s": 1.0}})
    assert "has not been run" not in ran and "NVIDIA H100" in ran


# ---- the checker itself, on a throw-away notebook ------------------------------------------
HEADER = """\
# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   specdec_guide:
#     tier: gpu
#     container: nvcr.io/nvidia/tritonserver:25.12-trtllm-python-py3
#     trtllm_version: 1.1.0
# ---
"""


def _check(tmp_path, checker, cells: str):
    src = tmp_path / "nb.py"
    src.write_text(HEADER + "\n" + textwrap.dedent(cells))
    result = checker.check_source(src)
    return result, [str(d) for d in result.diagnostics(tmp_path)]


def test_an_unknown_flag_in_a_bash_cell_is_reported_at_its_line(tmp_path, checker):
    result, diags = _check(tmp_path, checker, """\
        # %%
        # %%bash
        trtllm-build --checkpoint_dir ckpt --output_dir eng --max_batch_sise 4
        """)
    assert len(diags) == 1 and diags[0].startswith("nb.py:22:") and "max_batch_sise" in diags[0], diags
    assert result.cells[0].kind == "shell" and result.cells[0].references == 1


def test_a_shell_syntax_error_is_reported(tmp_path, checker):
    _, diags = _check(tmp_path, checker, """\
        # %%
        # %%bash
        if true; then echo
        """)
    assert diags and "shell syntax" in diags[0]


def test_python_and_bang_lines_are_checked_against_the_track(tmp_path, checker):
    _, diags = _check(tmp_path, checker, """\
        # %%
        from tensorrt_llm import LLM
        llm = LLM(model="m", max_batch_sizee=2)
        # !trtllm-serve m --no_such_flag 1
        """)
    assert any("max_batch_sizee" in d for d in diags) and any("--no_such_flag" in d for d in diags), diags


def test_writefile_cells_are_checked_by_what_they_write(tmp_path, checker):
    result, diags = _check(tmp_path, checker, """\
        # %%
        # %%writefile repo/tensorrt_llm/config.pbtxt
        name: "tensorrt_llm"
        backend: "python"
        input [ { name: "text_input" data_type: TYPE_STRING dims: [ -1 ] } ]
        input [ { name: "text_input" data_type: TYPE_STRING dims: [ -1 ] } ]

        # %%
        # %%writefile opts.yaml
        max_batch_sise: 2

        # %%
        # !trtllm-serve m --extra_llm_api_options opts.yaml
        """)
    assert [c.kind for c in result.cells] == ["pbtxt", "llm-yaml", "python"]
    assert any("duplicate input name 'text_input'" in d for d in diags), diags
    assert any("max_batch_sise" in d for d in diags), diags


def test_an_uncheckable_cell_fails_unless_marked_with_a_reason(tmp_path, checker):
    _, diags = _check(tmp_path, checker, """\
        # %%
        # %%writefile body.json
        {"text_input": "hi"}
        """)
    assert len(diags) == 1 and "cannot be checked statically" in diags[0]
    result, diags = _check(tmp_path, checker, """\
        # %%
        # %%writefile body.json
        # specdec-guide: unchecked: a request body; test_x sends the same JSON
        {"text_input": "hi"}

        # %%
        # %env HF_HOME=/tmp/hf
        """)
    assert len(diags) == 1 and "line magic %env" in diags[0]
    assert result.unchecked[0].reason.startswith("a request body")
    assert "not checked: a request body" in result.summary()
    _, diags = _check(tmp_path, checker, """\
        # %%
        # specdec-guide: unchecked:
        x = 1
        """)
    assert len(diags) == 1 and "needs a reason" in diags[0]


def test_a_cell_can_name_another_track(tmp_path, checker):
    result, diags = _check(tmp_path, checker, """\
        # %%
        # specdec-guide: trtllm=1.2.1
        import json
        """)
    assert not diags and result.cells[0].track == "1.2.1"
    _, diags = _check(tmp_path, checker, """\
        # %%
        # specdec-guide: trtllm=0.0.9
        import json
        """)
    assert diags and "unknown TRT-LLM track '0.0.9'" in diags[0]


def test_a_name_imported_in_an_earlier_cell_is_checked_where_it_is_called(tmp_path, checker):
    result, diags = _check(tmp_path, checker, """\
        # %%
        from tensorrt_llm.llmapi import NGramDecodingConfig

        # %%
        spec = NGramDecodingConfig(max_draft_len=4, max_matching_ngram_size=2, is_keep_al=True)
        """)
    assert len(diags) == 1 and diags[0].startswith("nb.py:24:") and "is_keep_al" in diags[0], diags
    assert result.cells[1].references == 1


def test_a_heredoc_in_a_bash_cell_is_checked_by_what_it_writes(tmp_path, checker):
    result, diags = _check(tmp_path, checker, """\
        # %%
        # %%bash
        mkdir -p repo/tensorrt_llm/1
        cat > repo/tensorrt_llm/1/model.yaml <<'EOF'
        model: /models/target
        max_batch_sise: 4
        EOF
        python3 - <<EOF
        from tensorrt_llm import LLM
        LLM(model="m", max_num_tokenz=8)
        EOF
        """)
    assert any(d.startswith("nb.py:25:") and "max_batch_sise" in d for d in diags), diags
    assert any(d.startswith("nb.py:29:") and "max_num_tokenz" in d for d in diags), diags
    _, diags = _check(tmp_path, checker, """\
        # %%
        # %%bash
        cat > notes.txt <<EOF
        anything
        EOF
        """)
    assert len(diags) == 1 and "heredoc into notes.txt" in diags[0], diags


def test_fill_template_calls_of_all_cells_are_one_sequence(tmp_path, checker):
    """Issue 26: a structural placeholder (here the ensemble's logits_datatype) that no cell fills is an
    error at the last call on that file, in the cell that makes it; filled by a later cell, it is not."""
    first = """\
        # %%
        # %%bash
        python3 /app/tools/fill_template.py -i "$REPOS/a/ensemble/config.pbtxt" triton_max_batch_size:4

        # %%
        # %%bash
        python3 /app/tools/fill_template.py -i "$REPOS/a/preprocessing/config.pbtxt" \\
            tokenizer_dir:/m,triton_max_batch_size:4,preprocessing_instance_count:1
        """
    _, diags = _check(tmp_path, checker, first)
    assert len(diags) == 1 and diags[0].startswith("nb.py:22:") and "cell 1:" in diags[0], diags
    assert "'ensemble' template (TRT-LLM 1.1.0)" in diags[0] and "logits_datatype" in diags[0]
    result, diags = _check(tmp_path, checker, first + """\

        # %%
        !python3 /app/tools/fill_template.py -i $REPOS/a/ensemble/config.pbtxt logits_datatype:TYPE_FP32
        """)
    assert diags == [] and result.cells[2].references == 1
