"""Rule 5: every fenced block in docs/ is an include of a verified snippet, or marked output."""

from pathlib import Path

from specdec_guide.validate import pages
from specdec_guide.validate.runner import validate_paths
from specdec_guide.validate.verified import verifier
from specdec_guide.releases.tracks import Registry

FIX = Path(__file__).parent / "fixtures" / "validate"
REG = Registry(FIX / "schemas")


def page_problems(repo: str, page: str) -> list[str]:
    root = FIX / repo
    report = validate_paths([root / page], root=root, registry=REG, is_verified=verifier(root, REG))
    return [str(d) for d in report.diagnostics]


def test_inline_code_fence_is_rejected():
    assert page_problems("pages_bad", "docs/inline.md") == [
        "docs/inline.md:5:1: inline code block: include it from snippets/ or model_repo_templates/ with "
        "--8<-- \"path\", or mark output with <!-- output --> before the fence"]


def test_missing_and_unverified_includes():
    assert page_problems("pages_bad", "docs/includes.md") == [
        "docs/includes.md:4:9: included file 'snippets/missing.sh' does not exist",
        "docs/includes.md:8:9: included file 'snippets/notes.txt' is not verified: no test in "
        "snippets/VERIFIED_BY.yaml runs it and `specdec-guide validate` has nothing of TRT-LLM in it to check",
    ]


def test_clean_page_passes():
    assert page_problems("clean", "docs/index.md") == []


def check(text: str) -> list:
    return pages.check(text, FIX / "clean", lambda p: True)[0]


def test_output_marker_mermaid_nesting_and_unclosed():
    assert check("<!-- output -->\n\n```\nok\n```\n") == []
    assert check("```mermaid\ngraph LR; a-->b\n```\n") == []
    assert check("````md\n```bash\nx\n```\n````\n") == [(1, 1, pages.check("```\nx\n```\n", FIX, bool)[0][0][2])]
    assert check("    ```bash\n    oops\n") == [(1, 5, "code fence is never closed")]


def test_include_rules():
    assert check('```\n--8<-- "docs/index.md"\n```\n') == [
        (2, 9, "include 'docs/index.md' is outside snippets/ or model_repo_templates/")]
    assert check('```\n--8<-- "https://example.com/x.sh"\n```\n')[0][2].endswith("is a URL; snippets must live in "
                                                                               "this repository")
    assert check('```\n--8<-- "snippets/serve/ngram.sh:3:5"\n```\n') == []
    assert check('```\n--8<-- "snippets/serve"\n```\n') == [(2, 9, "included path 'snippets/serve' is not a file")]


def test_a_track_tabs_marker_is_an_include_per_track(tmp_path):
    """Each track must have the marker's file (else its tab would silently vanish), and each file is
    checked as an include is; a path without {track} would show one file in every tab."""
    from registry import tracks

    first, *others = tracks()
    assert others, "needs two tracks to leave one without the file"
    (tmp_path / "snippets" / first).mkdir(parents=True)
    (tmp_path / "snippets" / first / "x.sh").write_text("echo hi\n")
    marker = "=== \"A\"\n\n    <!-- specdec-guide: track-tabs bash {path} -->\n"
    found = pages.check("# t\n" + marker.format(path="{track}/x.sh"), tmp_path, lambda p: True)[0]
    assert found == [(4, 41, f"track {t} has no 'snippets/{t}/x.sh': every track gets a tab here (add the file)")
                     for t in others]
    for t in others:
        (tmp_path / "snippets" / t).mkdir()
        (tmp_path / "snippets" / t / "x.sh").write_text("echo hi\n")
    assert pages.check(marker.format(path="{track}/x.sh"), tmp_path, lambda p: True)[0] == []
    unverified = pages.check(marker.format(path="{track}/x.sh"), tmp_path, lambda p: p.parent.name == first)[0]
    assert [msg.split(" is not verified")[0] for _, _, msg in unverified] == \
        [f"included file 'snippets/{t}/x.sh'" for t in others]
    assert pages.check(marker.format(path=f"{first}/x.sh"), tmp_path, lambda p: True)[0] == [
        (3, 41, f"track-tabs path '{first}/x.sh' has no {{track}}: it would show one file in every tab")]
