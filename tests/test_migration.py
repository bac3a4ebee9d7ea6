"""The migration map: both sides of every row agree with the snapshots, and the page shows it.

snippets/migration/map.yaml is the single source of the table on
docs/speculative_decoding/migration.md (rendered by the site hook). The legacy side of each row is
checked against the TensorRT-LLM 1.1.0 snapshot (flags, fill_template.py keys), each LLM API side
against the snapshot of its release.
"""

from __future__ import annotations

import shutil

import pytest

from site_build import ROOT
from specdec_guide import migration


def test_every_row_is_confirmed_by_the_snapshots():
    rows, problems = migration.check(ROOT)
    assert len(rows) >= 10
    assert not problems, "\n".join(map(str, problems))


def test_medusa_lookahead_and_redrafter_have_no_pytorch_equivalent_and_name_what_to_use():
    rows, _ = migration.load(ROOT)
    for method in ("medusa", "lookahead_decoding", "explicit_draft_tokens"):
        row = next(r for r in rows if f"--speculative_decoding_mode {method}" in r.legacy)
        for tid in migration.TRACKS:
            assert row.tracks[tid].get("none") and row.tracks[tid].get("instead"), (method, tid)


@pytest.fixture()
def copy_root(tmp_path):
    (tmp_path / "snippets/migration").mkdir(parents=True)  # the map only: the snapshots are the package's
    shutil.copy2(ROOT / migration.MAP_PATH, tmp_path / migration.MAP_PATH)
    return tmp_path


def _plant(root, old: str, new: str) -> None:
    """Replace the first ``old`` in the copied map.yaml with ``new`` (``old`` must be there)."""
    path = root / migration.MAP_PATH
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("old,new,expect", [
    ("speculative_model_dir: /models/draft", "speculative_model: /models/draft", "speculative_model"),
    ("decoding_type: DraftTarget\n            max_draft_len: 4\n            speculative_model_dir",
     "decoding_type: Eagle3\n            max_draft_len: 4\n            speculative_model_dir", "Eagle3"),
    ("eagle_choices:x", "eagle_choice:x", "eagle_choice"),
    ("engine_only: MedusaDecodingConfig", "engine_only: NGramDecodingConfig", "TensorRT-engine only"),
])
def test_a_wrong_side_is_reported_with_its_row(copy_root, old, new, expect):
    _plant(copy_root, old, new)
    _, problems = migration.check(copy_root)
    assert any(expect in p.message and p.path == migration.MAP_PATH and p.line > 1 for p in problems), problems


def test_the_page_carries_the_generated_table():
    from specdec_guide.site.hooks import on_page_markdown

    page = (ROOT / "docs/speculative_decoding/migration.md").read_text()
    assert migration.TABLE_MARKER in page
    assert migration.INPUTS_MARKER in page
    rendered = on_page_markdown(page, None, {"config_file_path": str(ROOT / "mkdocs.yml")}, None)
    assert migration.TABLE_MARKER not in rendered and migration.INPUTS_MARKER not in rendered
    for row in migration.load(ROOT)[0]:
        assert row.what in rendered
    for entry in migration.load_inputs(ROOT)[0]:
        assert all(f"`{name}`" in rendered for name in entry.legacy)


# -- the clients' side ----------------------------------------------------------------------------
# The legacy request inputs that issue 17 names: each must be in the map (as a legacy input or an alias).
NAMED = ("text_input", "max_tokens", "stream", "end_id", "pad_id", "bad_words", "stop_words",
         "exclude_input_in_output", "beam_width", "temperature", "runtime_top_k", "runtime_top_p", "random_seed",
         "return_log_probs", "presence_penalty", "frequency_penalty", "repetition_penalty", "len_penalty",
         "min_length")


def test_every_legacy_request_input_is_mapped_and_every_llmapi_name_exists():
    entries, problems = migration.check_inputs(ROOT)
    assert not problems, "\n".join(map(str, problems))
    mapped = {n for e in entries for n in e.legacy + e.aliases}
    assert set(NAMED) <= mapped, sorted(set(NAMED) - mapped)
    # Every input of the recorded ensemble and BLS configs, not only the named ones.
    for model, names in migration.legacy_request_inputs().items():
        assert len(names) > 30 and set(names) <= mapped, model


@pytest.mark.parametrize("old,new,expect", [
    ("llmapi: sampling_param_top_k\n", "llmapi: sampling_param_topk\n", "'sampling_param_topk' is not an input"),
    ("sampling_params: repetition_penalty", "sampling_params: repetition_penalty_x", "no field 'repetition_penalty_x'"),
    ("  - legacy: [bad_words]\n    llmapi: null\n    sampling_params: bad\n", "", "'bad_words' of 'ensemble' is not mapped"),
    ("  - legacy: [temperature]\n", "  - legacy: [temperature, top_k]\n", "'top_k' is mapped twice"),
])
def test_a_wrong_request_input_is_reported_with_its_line(copy_root, old, new, expect):
    _plant(copy_root, old, new)
    _, problems = migration.check_inputs(copy_root)
    assert any(expect in p.message and p.path == migration.MAP_PATH for p in problems), problems


def _request_body(name: str) -> tuple[str, dict]:
    import json
    import re

    text = (ROOT / "snippets/migration" / name).read_text()
    model = re.search(r"/v2/models/(\w+)/generate", text).group(1)
    return model, json.loads(re.search(r"-d '(\{.*?\})'", text, re.S).group(1))


def test_the_two_requests_side_by_side_agree_with_the_map():
    """The page's before/after request: every key of each is an input of its model, and each legacy
    key became the llmapi input the map names (or was dropped where the map says there is none)."""
    from specdec_guide.validate.schema import Registry

    old_model, old = _request_body("request_legacy.sh")
    new_model, new = _request_body("request_llmapi.sh")
    assert (old_model, new_model) == ("tensorrt_llm_bls", "tensorrt_llm")
    assert set(old) <= set(migration.legacy_request_inputs()[old_model])
    for tid in migration.TRACKS:
        inputs = {t["name"] for t in Registry().resolve(tid).triton["llmapi_model"]["inputs"]}
        assert set(new) <= inputs, (tid, set(new) - inputs)
    to = {n: e.llmapi for e in migration.load_inputs(ROOT)[0] for n in e.legacy}
    assert {to[k] for k in old if to[k]} == set(new)
    assert all(old[k] == new[to[k]] for k in old if to[k])  # the same values under the new names


def test_the_repositories_side_by_side_pass_the_validator():
    from specdec_guide.validate.runner import validate_paths

    paths = [ROOT / "snippets/migration" / n for n in ("legacy_repo.sh", "llmapi_repo.sh")]
    report = validate_paths(paths, root=ROOT)
    assert not report.diagnostics, "\n".join(map(str, report.diagnostics))
    # Each names what it replaces: the six legacy models and the one llmapi model.
    legacy, new = (p.read_text() for p in paths)
    for model in LEGACY_MODELS:
        assert model in legacy
    assert "/app/all_models/llmapi/." in new and "speculative_model_dir" in new


LEGACY_MODELS = ("preprocessing", "postprocessing", "ensemble", "tensorrt_llm", "tensorrt_llm_draft", "tensorrt_llm_bls")
_NUMBERS = {4: "four", 5: "five", 6: "six", 7: "seven"}


def _commands(name: str) -> list[list[str]]:
    """The snippet's commands (comments dropped, continuations joined, && split), as words."""
    import shlex

    text = (ROOT / "snippets/migration" / name).read_text()
    text = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#")).replace("\\\n", " ")
    return [shlex.split(part) for ln in text.splitlines() if ln.strip() for part in ln.split("&&")]


def test_the_legacy_script_fills_as_many_models_as_the_page_says():
    """Every model of the legacy repository gets one fill_template.py call, and the page's tab and the
    script's header count them right."""
    import re

    filled = [w[w.index("-i") + 1] for w in _commands("legacy_repo.sh") if "/app/tools/fill_template.py" in w]
    assert len(filled) == len(LEGACY_MODELS)
    page = (ROOT / "docs/speculative_decoding/migration.md").read_text()
    tab = re.search(r'=== "Before: engines, (\w+) models"', page).group(1)
    assert tab == _NUMBERS[len(LEGACY_MODELS)]
    assert f"{_NUMBERS[len(LEGACY_MODELS)]}\n# Triton models" in (ROOT / "snippets/migration/legacy_repo.sh").read_text()


def test_the_legacy_script_can_run_twice():
    """cp -R into an existing folder nests the copy inside it, and so does mv: the script removes both
    folders it copies into before the first copy."""
    cmds = _commands("legacy_repo.sh")
    first_copy = next(i for i, w in enumerate(cmds) if w[:2] == ["cp", "-R"])
    removed = {x for w in cmds[:first_copy] if w[:2] == ["rm", "-rf"] for x in w[2:]}
    assert {"$REPO", "$STAGE"} <= removed, cmds[:first_copy]


def test_the_checkpoints_the_scripts_read_are_downloaded_to_a_mounted_folder():
    import re

    got = {w[w.index("--local-dir") + 1]: w[2] for w in _commands("download.sh") if w[:2] == ["huggingface-cli", "download"]}
    scripts = "".join((ROOT / "snippets/migration" / n).read_text() for n in ("legacy_repo.sh", "llmapi_repo.sh"))
    read = set(re.findall(r"/workspace/hf/[\w.-]+", scripts))
    assert read and read <= set(got), read - set(got)
    assert all(repo.endswith("/" + path.rsplit("/", 1)[1]) for path, repo in got.items())  # hub id and folder agree
    for words in (w for w in _commands("containers.sh") if w[:2] == ["docker", "run"]):
        mounts = [words[i + 1] for i, w in enumerate(words) if w == "-v"]
        assert any(m.split(":")[1] == "/workspace" for m in mounts), mounts  # --rm: only a mount outlives it


def test_the_two_servers_run_in_two_containers_with_their_own_ports_and_gpus():
    """The launcher refuses a second tritonserver without --force and listens on its default ports, so
    side by side means one container each, the same image (the legacy track's), other host ports."""
    import yaml
    from specdec_guide.validate.schema import Registry

    runs = [w for w in _commands("containers.sh") if w[:2] == ["docker", "run"]]
    assert len(runs) == 2
    launcher = Registry().resolve(migration.LEGACY_TRACK).triton["launch_triton_server"]
    assert "--force" in launcher["flags"] and "unless --force" in launcher["behaviour"]
    inside = {launcher["defaults"][k] for k in ("http_port", "grpc_port", "metrics_port")}
    tracks = yaml.safe_load((ROOT / "src/specdec_guide/schemas/tracks.yaml").read_text())["tracks"]
    image = next(t["container"] for t in tracks if t["id"] == migration.LEGACY_TRACK)
    host_ports, gpus = [], []
    for words in runs:
        assert image in words
        ports = [words[i + 1].split(":") for i, w in enumerate(words) if w == "-p"]
        # published on the host's loopback only: Triton has no authentication
        assert all(len(p) == 3 and p[0] == "127.0.0.1" for p in ports), ports
        assert {c for _, _, c in ports} == inside, ports  # each launcher keeps its defaults inside
        host_ports += [h for _, h, _ in ports]
        gpus.append(words[words.index("--gpus") + 1])
    assert len(set(host_ports)) == len(host_ports) == 6, host_ports
    assert len(set(gpus)) == 2 and all(g.startswith('"device=') for g in gpus), gpus
    page = (ROOT / "docs/speculative_decoding/migration.md").read_text()
    assert '--8<-- "snippets/migration/containers.sh"' in page and "--force" in page
