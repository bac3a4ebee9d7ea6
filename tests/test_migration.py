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
    from specdec_guide.site.hooks import expand_markers

    page = (ROOT / "docs/speculative_decoding/migration.md").read_text()
    assert migration.TABLE_MARKER in page
    assert migration.INPUTS_MARKER in page
    rendered = expand_markers(page, "migration.md", ROOT)
    assert migration.TABLE_MARKER not in rendered and migration.INPUTS_MARKER not in rendered
    for row in migration.load(ROOT)[0]:
        assert row.what in rendered
    for entry in migration.load_inputs(ROOT)[0]:
        assert all(f"`{name}`" in rendered for name in entry.legacy)


# -- does each counterpart do what the legacy item did? -------------------------------------------
# The behaviour record of each track lists, under a fact's does_not_work, what the release accepts and
# then ignores, overwrites or fails on. A counterpart the map offers there must say so on that track
# (works: false, why:, fact: <that fact's id>): the map may not promise what the record denies.

def _offered(entry_targets):
    """(track, target) -> the map's works/fact for it, for every counterpart the map offers."""
    out = {}
    for tid, targets, spec in entry_targets:
        for target in targets:
            out[(tid, target)] = spec
    return out


def _map_counterparts():
    from specdec_guide.releases.tracks import Registry

    registry = Registry()
    rows, _ = migration.load(ROOT)
    entries, _ = migration.load_inputs(ROOT)
    found = []
    for tid in migration.TRACKS:
        track = registry.resolve(tid)
        for row in rows:
            entry = row.tracks[tid]
            text = entry.get("yaml") or entry.get("instead") or ""
            found.append((tid, migration._yaml_targets(text, track), entry if entry.get("yaml") else {}))
        for e in entries:
            targets = ({f"input:{e.llmapi}"} if e.llmapi else set()) | \
                ({f"sampling_params:{e.sampling_params}"} if e.sampling_params else set())
            found.append((tid, targets, e.tracks.get(tid) or {}))
    return registry, found


def test_no_counterpart_promises_what_the_behaviour_record_denies():
    """Cross-check by fact id: every does_not_work name of every track's record that the map offers as
    a counterpart is marked works: false on that track, citing that fact; and the check that enforces
    it (migration.check / check_inputs) finds nothing."""
    registry, found = _map_counterparts()
    offered = _offered(found)
    checked = 0
    for tid in migration.TRACKS:
        for fact in registry.resolve(tid).behaviour.facts.values():
            for target in fact.does_not_work:
                spec = offered.get((tid, target))
                if spec is None:
                    continue  # the map does not offer it (for example a field only a 'none' names)
                checked += 1
                assert spec.get("works") is False and fact.id in migration._facts_of(spec), (tid, target, fact.id, spec)
                assert str(spec.get("why") or "").strip(), (tid, target)
    # penalties (x3), stop, cumulative logprob, streaming, perf metrics: on both tracks
    assert checked >= 14, checked
    problems = migration.check(ROOT)[1] + migration.check_inputs(ROOT)[1]
    assert not [p for p in problems if "behaviour record" in p.message or "works" in p.message], problems


def test_the_named_problems_of_issue_26_are_marked_on_both_tracks():
    entries = {n: e for e in migration.load_inputs(ROOT)[0] for n in e.legacy}
    expect = {"presence_penalty": "penalties_applied_by_sampler", "frequency_penalty": "penalties_applied_by_sampler",
              "repetition_penalty": "penalties_applied_by_sampler", "return_log_probs": "llmapi_cumulative_logprob_value",
              "stop_words": "llmapi_stop_strings_as_bytes"}
    for name, fact in expect.items():
        for tid in migration.TRACKS:
            spec = entries[name].tracks.get(tid) or {}
            assert spec.get("works") is False and spec.get("fact") == fact, (name, tid, spec)
    rows, _ = migration.load(ROOT)
    tree = [r for r in rows if "eagle_choices" in r.show or "num_eagle_layers" in r.show]
    assert len(tree) == 2
    for row in tree:
        for tid in migration.TRACKS:
            entry = row.tracks[tid]
            assert entry.get("none") and entry.get("fact") == "eagle_tree_fields_on_pytorch", (row.show, tid)
            assert not {"eagle_choices", "num_eagle_layers", "max_non_leaves_per_layer"} & set(entry["instead"].split()), entry


@pytest.mark.parametrize("old,new,expect", [
    # a row that claims to work where the record says the input is ignored
    ("  - legacy: [presence_penalty]\n    llmapi: sampling_param_presence_penalty\n    tracks:\n      \"1.1.0\": {works: false",
     "  - legacy: [presence_penalty]\n    llmapi: sampling_param_presence_penalty\n    tracks:\n      \"1.1.0\": {works: true",
     "maps to sampling_param_presence_penalty, which the TRT-LLM 1.1.0 behaviour record says does not work "
     "(fact penalties_applied_by_sampler)"),
    # a row whose fragment offers a tree field again, unmarked
    ("speculative_model_dir: /models/eagle3-head\\n\", note: \"speculative_config.decoding_type names the method",
     "speculative_model_dir: /models/eagle3-head\\n  eagle_choices: [[0], [1]]\\n\", note: \"speculative_config.decoding_type names the method",
     "maps to EagleDecodingConfig.eagle_choices, which the TRT-LLM 1.1.0 behaviour record says does not work"),
    # works: false citing a fact that is not about this input
    ("fact: llmapi_stop_strings_as_bytes", "fact: penalties_applied_by_sampler", "names none of this entry's counterparts"),
    # works: false citing a fact the record does not have
    ("fact: llmapi_cumulative_logprob_value", "fact: cumulative_logprob_is_none", "is not in the TRT-LLM 1.1.0 behaviour record"),
    # works: false without saying why
    ("{works: false, fact: llmapi_model_streams_per_step, why: ", "{works: false, fact: llmapi_model_streams_per_step, whence: ",
     "works: false needs why:"),
])
def test_a_counterpart_the_record_contradicts_is_reported(copy_root, old, new, expect):
    _plant(copy_root, old, new)
    problems = migration.check(copy_root)[1] + migration.check_inputs(copy_root)[1]
    assert any(expect in p.message and p.path == migration.MAP_PATH and p.line > 1 for p in problems), problems


def test_the_page_says_which_counterparts_do_not_work():
    from specdec_guide.site.hooks import expand_markers

    page = (ROOT / "docs/speculative_decoding/migration.md").read_text()
    rendered = expand_markers(page, "docs/speculative_decoding/migration.md", ROOT)
    _, found = _map_counterparts()
    for tid, _targets, spec in found:
        if spec.get("works") is False:
            assert f"`{spec['fact']}`" in rendered and spec["why"].split(":")[0][:40] in rendered, (tid, spec)
    assert rendered.count("**Does not work as before**") >= 7


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
    from specdec_guide.releases.tracks import Registry

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
    # The "after" request uses no input that does not work on a release (stop strings fail the request
    # there), except the perf metrics, kept to show the counters' shape: the page says their draft
    # counters stay 0.
    off = {e.llmapi for e in migration.load_inputs(ROOT)[0] if e.llmapi
           and any((e.tracks.get(t) or {}).get("works") is False for t in migration.TRACKS)}
    assert set(new) & off <= {"sampling_param_return_perf_metrics"}, set(new) & off
    page = (ROOT / "docs/speculative_decoding/migration.md").read_text()
    assert "draft counters stay 0" in page


def test_the_repositories_side_by_side_pass_the_validator():
    from specdec_guide.validate.runner import validate_paths
    from specdec_guide.validate.verified import verifier

    paths = [ROOT / "snippets/migration" / n for n in ("legacy_repo.sh", "llmapi_repo.sh")]
    report = validate_paths(paths, root=ROOT, is_verified=verifier(ROOT))
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
    from specdec_guide.releases.tracks import Registry

    runs = [w for w in _commands("containers.sh") if w[:2] == ["docker", "run"]]
    assert len(runs) == 2
    launcher = Registry().resolve(migration.LEGACY_TRACK).triton["launch_triton_server"]
    assert "--force" in launcher["flags"] and "unless --force" in launcher["behaviour"]
    inside = {launcher["defaults"][k] for k in ("http_port", "grpc_port", "metrics_port")}
    image = Registry().resolve(migration.LEGACY_TRACK).container
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


def test_every_eagle_fragment_runs_the_form_each_release_lists_for_its_eagle3_targets():
    """The legacy EAGLE engine's counterpart, and every EAGLE-3 fragment offered instead of a method, is
    two-model with the overlap scheduler off on each track: the release's page (fact eagle3_forms) lists
    every EAGLE-3 target it names under two-model and only some under one-model, the default."""
    import yaml

    from specdec_guide.releases.tracks import Registry

    rows, _ = migration.load(ROOT)
    seen = 0
    for tid in migration.TRACKS:
        forms = Registry().resolve(tid).behaviour.facts["eagle3_forms"].value
        assert set(forms["one_model"]) < set(forms["two_model"]), forms  # the reason for the form below
        for row in rows:
            entry = row.tracks[tid]
            for text in (entry.get("yaml"), entry.get("instead")):
                doc = yaml.safe_load(text) if text else None
                spec = (doc or {}).get("speculative_config") or {}
                if spec.get("decoding_type") != "Eagle":
                    continue
                seen += 1
                assert spec.get("eagle3_one_model") is False, (row.show, tid, spec)
                assert doc.get("disable_overlap_scheduler") is True, (row.show, tid, doc)
    assert seen >= 12, seen
