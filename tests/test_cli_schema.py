"""The command-line snapshots (``schemas/<track>/cli.yaml`` and triton.yaml's fill_template block):
every recorded fact names a source with its commit, and scripts/regen_cli_schema.py rebuilds them.

The parsers are exercised on small pages written here in the shape of the release documentation
(sphinx-click, sphinx-argparse, an option table) and on a script and a template of our own; the
network is never used.
"""

import importlib.util
import re
from pathlib import Path

import pytest

from specdec_guide.releases.tracks import Registry
from registry import tracks

ROOT = Path(__file__).resolve().parents[1]
REGEN_PATH = ROOT / "scripts" / "regen_cli_schema.py"
TRACKS = tuple(tracks())
#: Flags that differ between releases, as each release's pages give them: a new track says its own.
CLI_FACTS = {"1.1.0": {"serve --config": False, "trtllm-build --auto_parallel": True},
             "1.2.1": {"serve --config": True, "trtllm-build --auto_parallel": False}}


def regen():
    spec = importlib.util.spec_from_file_location("regen_cli_schema", REGEN_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def walk_entries(node: dict, where: str, inherited: str | None):
    """Yield ``(where, source)`` for every entry that records flags or keys."""
    source = node.get("source", inherited)
    if "flags" in node or "keys" in node:
        yield where, source
    for group in ("subcommands", "variants", "models"):
        for name, child in (node.get(group) or {}).items():
            yield from walk_entries(child or {}, f"{where} {name}", source)


@pytest.mark.parametrize("track", TRACKS)
def test_every_recorded_flag_and_template_key_has_a_source_with_its_commit(track):
    t = Registry().resolve(track)
    cli, legacy = t.cli, t.triton["legacy_inflight_batcher_llm"]
    entries = []
    for group in ("commands", "scripts"):
        for name, spec in (cli.get(group) or {}).items():
            entries += [(w, s, cli["sources"]) for w, s in walk_entries(spec, name, None)]
    fill = legacy["fill_template"]
    entries.append(("fill_template.py", fill.get("source"), legacy["sources"]))
    entries += [(w, s, legacy["sources"]) for w, s in walk_entries({"models": legacy["models"]}, "template", None)]
    assert len(entries) >= 15
    for where, source, table in entries:
        assert source, f"{track}: {where} names no source"
        src = table.get(source)
        assert src, f"{track}: {where}: source '{source}' is not in the sources table"
        assert re.fullmatch(r"[0-9a-f]{40}", src.get("commit", "")), f"{track}: {where}: no commit"
        assert src.get("repo") and src.get("path") and src.get("url"), f"{track}: {where}: incomplete source"
    # Facts from the release pages are confirmed; repository files not tied to the release say so.
    for name, src in {**cli["sources"], **legacy["sources"]}.items():
        assert ("unconfirmed" in src) == (not src["path"].startswith(f"{track}/")), name


@pytest.mark.parametrize("track", TRACKS)
def test_snapshot_counts_and_release_specific_facts(track):
    t = Registry().resolve(track)
    cmds = t.cli["commands"]
    assert "--speculative_decoding_mode" in cmds["trtllm-build"]["flags"]
    assert "--max_draft_len" in cmds["trtllm-build"]["flags"]
    serve = cmds["trtllm-serve"]["subcommands"]["serve"]["flags"]
    assert "--extra_llm_api_options" in serve
    assert track in CLI_FACTS, f"{track}: record in CLI_FACTS whether its trtllm-serve has --config and trtllm-build --auto_parallel"
    assert ("--config" in serve) == CLI_FACTS[track]["serve --config"]
    assert ("--auto_parallel" in cmds["trtllm-build"]["flags"]) == CLI_FACTS[track]["trtllm-build --auto_parallel"]
    models = t.triton["legacy_inflight_batcher_llm"]["models"]
    assert set(models) == {"preprocessing", "postprocessing", "tensorrt_llm", "tensorrt_llm_bls", "ensemble", "llmapi"}
    assert len(models["tensorrt_llm"]["keys"]) == 52
    assert "prompt_embedding_table_data_type" in models["tensorrt_llm_bls"]["keys"]
    assert models["llmapi"]["keys"] == []


CLICK_PAGE = """
<pre><span></span>toolx<span class="w"> </span>[OPTIONS]<span class="w"> </span>COMMAND</pre>
<dl class="std option"><dt class="sig sig-object std" id="cmdoption-toolx-m">
<span class="sig-name descname"><span class="pre">-m</span></span><span class="sig-prename descclassname">
<span class="pre">,</span> </span><span class="sig-name descname"><span class="pre">--model</span></span></dt></dl>
<pre><span></span>toolx<span class="w"> </span>run<span class="w"> </span>[OPTIONS]</pre>
<dl class="std option"><dt class="sig sig-object std" id="cmdoption-toolx-run-fast">
<span class="sig-name descname"><span class="pre">--fast</span></span></dt></dl>
<pre><span></span>toolx<span class="w"> </span>other_sub<span class="w"> </span>[OPTIONS]</pre>
<dl class="std option"><dt class="sig sig-object std" id="cmdoption-toolx-other_sub-a">
<span class="sig-name descname"><span class="pre">--a-b</span></span></dt></dl>
"""
ARGPARSE_PAGE = "<dl><dt><kbd>--alpha</kbd></dt><dd>x</dd><dt><kbd>--beta, --b2</kbd></dt></dl>"
TABLE_PAGE = """
<pre><span></span>python<span class="w"> </span>prep.py<span class="w"> </span>[OPTIONS]</pre>
<table><tr><td><p><code class="docutils literal notranslate"><span class="pre">--out</span></code></p></td></tr></table>
<pre><span></span>python<span class="w"> </span>prep.py<span class="w"> </span>synth<span class="w"> </span>[OPTIONS]</pre>
<table><tr><td><p><code class="docutils literal notranslate"><span class="pre">--num-x</span></code></p></td></tr></table>
"""
SCRIPT = """
p.add_argument('--in_dir', type=str)
p.add_argument("--quick", "-q", action="store_true")
p.add_argument('positional')
"""
TEMPLATE = 'name: "m"\nmax_batch_size: ${size}\n# old: ${gone}\nparameters { value: "${size}" }\n'


def test_regen_parsers_read_the_page_and_file_shapes():
    r = regen()
    assert r.click_page_flags(CLICK_PAGE, "toolx") == {(): ["-m", "--model"], ("run",): ["--fast"],
                                                       ("other_sub",): ["--a-b"]}
    assert r.argparse_page_flags(ARGPARSE_PAGE) == ["--alpha", "--beta", "--b2"]
    assert r.table_page_flags(TABLE_PAGE, "prep.py") == {(): ["--out"], ("synth",): ["--num-x"]}
    assert r.argparse_script_flags(SCRIPT) == ["--in_dir", "--quick", "-q"]
    assert r.template_keys(TEMPLATE) == ["size", "gone"]


ROLES_TEMPLATE = """
name: "m"
backend: "${be}"
max_batch_size: ${size}
input [ { name: "x" data_type: ${dtype} dims: [ -1 ] } ]
# parameters: { key: "old" value: { string_value: "${gone}" } }
parameters: {
  key: "engine"
  value: {
    string_value: "${engine_dir}"
  }
}
parameters { key: "both" value: { string_value: "${size}" } }
instance_group [ { count: ${count} kind: KIND_CPU } ]
"""


def test_regen_tells_structural_placeholders_from_parameter_values():
    r = regen()
    assert r.template_roles(ROLES_TEMPLATE) == {"be": "structural", "size": "structural", "dtype": "structural",
                                                "gone": "comment", "engine_dir": "parameter", "count": "structural"}
    assert r.structural_keys(ROLES_TEMPLATE) == ["be", "size", "dtype", "count"]


def test_regen_compare_reports_both_directions():
    r = regen()
    recorded = {"commands": {"x": {"flags": ["--a", "--old"], "subcommands": {"s": {"flags": ["--k"]}}}}}
    source = {"commands": {"x": {"flags": ["--a", "--new"], "subcommands": {"s": {"flags": ["--k"]}}}}}
    assert r.compare(recorded, source) == ["commands.x.flags: --old recorded, not in the source",
                                           "commands.x.flags: --new in the source, not recorded"]
    assert r.compare(recorded, recorded) == []


def test_regen_from_a_folder_reproduces_the_recorded_snapshot(tmp_path):
    """Write minimal sources that say exactly what the 1.1.0 snapshot records, run the script with
    --from and --check: it must find no difference; then drop one flag from a page: one difference."""
    r = regen()
    t = Registry().resolve("1.1.0")
    cmds, legacy = t.cli["commands"], t.triton["legacy_inflight_batcher_llm"]
    srcs = r.SOURCES["1.1.0"]

    def write(name, text):
        path = tmp_path / srcs[name]["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def click(prog, spec):
        out = [f"<pre>{prog} [OPTIONS] COMMAND</pre>"] + [_dt(f) for f in spec["flags"] if f != "--help"]
        for sub, s in spec["subcommands"].items():
            out.append(f"<pre>{prog} {sub} [OPTIONS]</pre>")
            out += [_dt(f) for f in s.get("flags", []) if f != "--help"]
        return "\n".join(out)

    prep = t.cli["scripts"]["prepare_dataset.py"]
    bench = click("trtllm-bench", cmds["trtllm-bench"]) + "\n<pre>python prepare_dataset.py [OPTIONS]</pre>\n" + "".join(
        _td(f) for f in prep["flags"] if f not in ("-h", "--help")) + "".join(
        f"\n<pre>python prepare_dataset.py {s} [OPTIONS]</pre>\n" + "".join(_td(f) for f in v["flags"] if f != "--help")
        for s, v in prep["subcommands"].items())
    write("bench_page", bench)
    write("serve_page", click("trtllm-serve", cmds["trtllm-serve"]))
    write("build_page", "".join(f"<dt><kbd>{f}</kbd></dt>" for f in cmds["trtllm-build"]["flags"]))
    for v, spec in cmds["convert_checkpoint.py"]["variants"].items():
        write(f"convert_{v}", "".join(f"p.add_argument('{f}')\n" for f in spec["flags"] if f not in ("-h", "--help")))
    write("fill_template", "p.add_argument('--in_place', '-i')\n")
    def template(spec):  # each key where the snapshot says it stands
        out = []
        for k in spec["keys"]:
            if k in spec["structural_keys"]:
                out.append(f"max_batch_size: ${{{k}}}\n")
            elif k in spec.get("comment_keys", []):
                out.append(f"# ${{{k}}}\n")
            else:
                out.append(f'parameters: {{ key: "{k}" value: {{ string_value: "${{{k}}}" }} }}\n')
        return "".join(out)

    for model, spec in legacy["models"].items():
        write(f"template_{model}", template(spec))
    assert r.main(["1.1.0", "--from", str(tmp_path), "--check"]) == 0
    # a structural key that the source has as a parameters value: one difference
    bls = tmp_path / srcs["template_tensorrt_llm_bls"]["path"]
    bls.write_text(bls.read_text().replace("max_batch_size: ${bls_instance_count}",
                                           'parameters { value: { string_value: "${bls_instance_count}" } }'))
    assert r.main(["1.1.0", "--from", str(tmp_path), "--check"]) == 1
    bls.write_text(template(legacy["models"]["tensorrt_llm_bls"]))
    page = tmp_path / srcs["build_page"]["path"]
    page.write_text(page.read_text().replace("<dt><kbd>--max_draft_len</kbd></dt>", ""))
    assert r.main(["1.1.0", "--from", str(tmp_path), "--check"]) == 1


def _dt(flag: str) -> str:
    return (f'<dt class="sig sig-object std" id="cmdoption-x"><span class="sig-name descname">'
            f'<span class="pre">{flag}</span></span></dt>')


def _td(flag: str) -> str:
    return f'<td><p><code class="docutils literal notranslate"><span class="pre">{flag}</span></code>'


def test_unrecorded_parts_of_the_real_snapshots_are_notes():
    from specdec_guide.validate import shell
    from specdec_guide.validate.notes import is_note

    reg = Registry()
    found, _, _ = shell.check("trtllm-serve disaggregated -c cfg.yaml --request_timeout 5\n", reg.resolve("1.2.1"), reg)
    assert [(ln, col, is_note(m)) for ln, col, m in found] == [(1, 40, True)]
    assert shell.check("trtllm-serve disaggregated -c cfg.yaml --request_timeout 5\n", reg.resolve("1.1.0"), reg)[0] == []
    found, _, _ = shell.check("trtllm-eval --model m\npython3 examples/qwen/convert_checkpoint.py --x 1\n",
                              reg.resolve("1.1.0"), reg)
    assert [(ln, is_note(m)) for ln, _, m in found] == [(1, True), (2, True)]
