"""``specdec-guide repo render``: turn a template from model_repo_templates/llmapi/ into a model repository.

A template is what the guide shows (config.pbtxt + 1/model.yaml with ``${...}`` markers). Render
copies it, fills the markers, and adds the 1/model.py that executes it: our CPU reference engine
(``--engine cpu``) or TensorRT-LLM's own llmapi model.py from the Triton container
(``--engine trtllm``). ``--trtllm`` picks the track (default: the registry's default), and the
rendered model.yaml follows it: its release line, the ``decoding_type`` spelling and draft-model key
of that release (from methods.yaml and the track's snapshot), its ``trtllm=`` marker, and the
track's container for the llmapi model files. Only PyYAML is imported here; the CLI loads this
module on every start.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

from specdec_guide.diagnostics import UserError
from specdec_guide.releases import methods as _methods
from specdec_guide.releases.tracks import Registry, Track

# The methods and what each needs or refuses come from the methods registry (schemas/methods.yaml).
_REGISTRY = _methods.load()
METHODS = tuple(m.id for m in _REGISTRY)
ENGINES = ("cpu", "trtllm")
DEFAULT_NAME = "tensorrt_llm"
# The lines of a template's model.yaml that name or depend on the release: render sets them for the track.
_RELEASE_LINE = re.compile(r"(?m)^# TensorRT-LLM (\S+) llmapi model \(Triton [^)]*\)(.*)$")
_DECODING_TYPE = re.compile(r"(?m)^(  decoding_type:)[ \t]*\S+")
_DRAFT_KEY = re.compile(r"(?m)^(  )(?:speculative_model_dir|speculative_model):")

NEEDS_DRAFT_MODEL = {m.id for m in _REGISTRY if m.needs == "draft_model"}
NEEDS_DRAFTER = {m.id for m in _REGISTRY if m.needs == "drafter"}
# Why each refusal: the registry says which methods are refused (cpu_engine, trtllm_model), these say why.
_CPU_WHY = {
    "eagle3": "EAGLE-3 runs trained draft heads on the target's hidden states inside TensorRT-LLM; "
    "the CPU engine does not emulate it (render with --engine trtllm in the Triton container)",
    "mtp": "MTP needs a checkpoint with multi-token-prediction layers (DeepSeek-V3/R1) run by TensorRT-LLM; "
    "the CPU engine does not emulate it (render with --engine trtllm in the Triton container)",
}
_TRTLLM_WHY = {
    "user_provided": "TensorRT-LLM takes a user-provided drafter only as a Python object "
    "(UserProvidedDecodingConfig(drafter=...)); its llmapi model.py builds LLM() from model.yaml, "
    "which cannot hold one: write your own model.py that constructs the LLM",
}
# The CPU engine imitates nothing it cannot honour: these need TensorRT-LLM's kernels and weights.
CPU_REFUSES = {m.id: _CPU_WHY.get(m.id, "the CPU engine does not run it (render with --engine trtllm in the "
                                  "Triton container)") for m in _REGISTRY if not m.cpu_engine}
TRTLLM_REFUSES = {m.id: _TRTLLM_WHY.get(m.id, "the container's llmapi model.py cannot serve it from model.yaml")
                  for m in _REGISTRY if not m.trtllm_model}
_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_DRAFTER_RE = re.compile(r"^(?:[A-Za-z_][\w.]*|[^:]+\.py):[A-Za-z_]\w*$")
_PKG = Path(__file__).resolve().parent


def templates_root() -> Path:
    """model_repo_templates/llmapi in the source tree (the package is installed editable)."""
    root = _PKG.parents[1] / "model_repo_templates" / "llmapi"
    if not root.is_dir():
        raise UserError(f"templates not found at {root}; run from a checkout of the guide (pip install -e .)")
    return root


def template_dir(method: str) -> Path:
    return templates_root() / _methods.get(method).template / DEFAULT_NAME


def _container_model_files(track: Track) -> tuple[str, list[str]]:
    """Where the track's container keeps the llmapi model.py and which files to take, from its snapshot."""
    facts = track.triton.get("llmapi_model") or {}
    if not facts.get("container_path") or not facts.get("files"):
        raise UserError(f"TensorRT-LLM {track.id}: its snapshot ({track.folder / 'triton.yaml'}) records no "
                        "llmapi_model container_path and files, so --engine trtllm cannot name them")
    files = [f.split("/", 1)[1] for f in facts["files"] if f.startswith("1/") and f.endswith(".py")]
    return facts["container_path"] + "/1", files


def written_for(text: str, path: Path) -> str:
    """The TensorRT-LLM version a template's model.yaml names in its release line."""
    found = _RELEASE_LINE.search(text)
    if found is None:
        raise UserError(f"{path}:1:1: the template has no '# TensorRT-LLM <version> llmapi model (Triton <tag>)' "
                        "line to set")
    return found.group(1)


def _io_names(config: str) -> set[str]:
    # Every name: "..." of the input and output blocks; the model's own name line starts a line.
    return set(re.findall(r'(?m)^[ \t]+name:[ \t]*"([^"]+)"', config))


def config_for_track(config: str, track: Track, template_release: str) -> str:
    """A template's config.pbtxt as rendered for ``track``. Its comments describe the release the template
    was written for; for another track a leading comment says so and compares the inputs and outputs with
    what the track's snapshot (triton.yaml, llmapi_model) records, and whether the snapshot confirms them."""
    if template_release == track.trtllm_version:
        return config
    facts = track.triton.get("llmapi_model") or {}
    recorded = {io["name"] for key in ("inputs", "outputs") for io in facts.get(key) or [] if "name" in io}
    snapshot = track.folder / "triton.yaml"
    if snapshot.is_relative_to(_PKG.parents[1]):
        snapshot = snapshot.relative_to(_PKG.parents[1])
    ours = _io_names(config)
    if not recorded:
        match = f"{snapshot} records no llmapi inputs or outputs to compare them with"
    elif ours == recorded:
        match = f"they are the names {snapshot} records"
    else:
        diff = [f"not in the snapshot: {', '.join(sorted(ours - recorded))}"] if ours - recorded else []
        diff += [f"only in the snapshot: {', '.join(sorted(recorded - ours))}"] if recorded - ours else []
        match = f"they differ from {snapshot} ({'; '.join(diff)})"
    if facts.get("unconfirmed"):
        match += (f", which marks them unconfirmed for {track.trtllm_version}: compare with "
                  f"{facts.get('container_path') or 'the llmapi model'}/config.pbtxt in {track.container}")
    note = (f"# (Rendered for TensorRT-LLM {track.trtllm_version} (Triton {track.container_tag or track.container}) from "
            f"a template written for {template_release}: the comments below describe {template_release}'s "
            f"container. The inputs and outputs are {template_release}'s llmapi model's; {match}.)\n")
    return _wrap_comment(note) + config


def _wrap_comment(line: str, width: int = 110) -> str:
    words, out, cur = line[2:].split(), [], "#"
    for word in words:
        if len(cur) + 1 + len(word) > width and cur != "#":
            out.append(cur)
            cur = "#"
        cur += " " + word
    out.append(cur)
    return "\n".join(out) + "\n"


def for_track(text: str, method: str, track: Track, path: Path) -> str:
    """A template's model.yaml text as ``track``'s release reads it: the release line names the track's
    TensorRT-LLM and container, ``decoding_type`` is the method's spelling there (methods.yaml) and the
    draft model sits under the key the track's snapshot names (``Track.draft_key_field``)."""
    template_release = written_for(text, path)
    found = _RELEASE_LINE.search(text)
    release = f"# TensorRT-LLM {track.trtllm_version} llmapi model (Triton {track.container_tag or track.container})"
    if template_release != track.trtllm_version:
        # The template's prose describes the release it was written for; the keys below are the track's.
        release = (f"# (Rendered for TensorRT-LLM {track.trtllm_version} from a template written for {template_release}: "
                   f"the keys and values are {track.trtllm_version}'s,\n# and a comment naming {template_release} "
                   f"describes that release.)\n{release}")
    text = text[:found.start()] + release + found.group(2) + text[found.end():]
    spelling = _methods.get(method).spelling(track.id)
    if spelling is not None:
        text, n = _DECODING_TYPE.subn(rf"\g<1> {spelling}", text)
        if n != 1:
            raise UserError(f"{path}:1:1: the template has no speculative_config decoding_type line to set")
    if track.draft_key_field is not None:
        text = _DRAFT_KEY.sub(rf"\g<1>{track.draft_key_field}:", text)
    return text


def _yaml_value(value: str) -> str:
    # A JSON string is a valid YAML double-quoted scalar: paths with spaces or ':' stay intact.
    return json.dumps(value)


def _fill_model_yaml(text: str, values: dict[str, str], max_batch_size: int | None, decoupled: bool | None) -> str:
    # Only values are filled; the comments that explain the markers stay as the template has them.
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("#"):
            for marker, value in values.items():
                line = line.replace("${" + marker + "}", _yaml_value(value))
            lines[i] = line
    text = "".join(lines)
    if decoupled is not None:
        text, n = re.subn(r"(?m)^(  decoupled:)\s*\w+", rf"\g<1> {'true' if decoupled else 'false'}", text)
        if n != 1:
            raise UserError("template has no triton_config.decoupled line to set")
    if max_batch_size is not None:
        text, n = re.subn(r"(?m)^(  max_batch_size:)\s*\d+", rf"\g<1> {max_batch_size}", text)
        if n != 1:
            raise UserError("template has no triton_config.max_batch_size line to set")
    return text


def _fill_config(config: str, triton_config: dict, path: Path) -> str:
    """Write model.yaml's triton_config.{decoupled,max_batch_size} into config.pbtxt as well.

    The container's launch_triton_server.py starts Triton with --disable-auto-complete-config, so
    behind it Triton reads only config.pbtxt; with auto-complete on, model.py copies triton_config and
    Triton refuses a config.pbtxt whose policy differs. Equal values in both files work either way.
    """
    decoupled = triton_config.get("decoupled", False)
    mbs = triton_config.get("max_batch_size", 0) or 0
    if not isinstance(decoupled, bool) or isinstance(mbs, bool) or not isinstance(mbs, int) or mbs < 0:
        raise UserError(f"{path.parent / '1' / 'model.yaml'}:1:1: triton_config needs decoupled: true|false "
                        f"and max_batch_size: an integer >= 0 (got {decoupled!r}, {mbs!r})")
    config, n = re.subn(r"(?m)^(\s+decoupled:)\s*\w+", rf"\g<1> {'true' if decoupled else 'false'}", config)
    if n != 1:
        raise UserError(f"{path}:1:1: template config.pbtxt has no model_transaction_policy {{ decoupled: ... }} line to set")
    config, n = re.subn(r"(?m)^(max_batch_size:)\s*\d+", rf"\g<1> {mbs}", config)
    if n != 1:
        raise UserError(f"{path}:1:1: template config.pbtxt has no max_batch_size line to set")
    return config


def _check_draft_hub_id(draft_model: str, track: Track) -> None:
    """--engine trtllm: refuse a hub id as the draft or head where the container's release reads only folders.

    Driven by the release's behaviour record (fact hub_id_as_speculative_model), not by a version test.
    """
    from specdec_guide.validate.behaviour_rules import looks_like_hub_id

    if Path(draft_model).expanduser().exists() or not looks_like_hub_id(draft_model):
        return
    fact = track.behaviour.facts.get("hub_id_as_speculative_model")
    if fact is not None and fact.value is False:
        raise UserError(f"--draft-model {draft_model}: a Hugging Face hub id, but TensorRT-LLM {track.id} (the "
                        f"container's release) reads the draft model / EAGLE-3 head only from a local folder: download "
                        f"it first (huggingface_hub.snapshot_download('{draft_model}', local_dir=...)) and pass that "
                        f"directory")


def _leftover_markers(node, path="") -> list[str]:
    if isinstance(node, dict):
        return [m for k, v in node.items() for m in _leftover_markers(v, f"{path}.{k}" if path else str(k))]
    if isinstance(node, str) and "${" in node:
        return [f"{path}: {node}"]
    return []


def _looks_local(value: str) -> bool:
    """Whether ``value`` was meant as a path on this machine rather than a Hugging Face name.

    A hub name is ``name`` or ``org/name``; anything with a path prefix, more than one '/', or a
    first component that is a folder here (``models/targt`` next to ``models/``) is a path.
    """
    if value.startswith(("/", "./", "../", "~")) or value in (".", "..") or value.count("/") > 1:
        return True
    return "/" in value and Path(value.split("/", 1)[0]).is_dir()


def check_model_path(flag: str, value: str, engine: str) -> str | None:
    """Refuse a local checkpoint path that cannot work; return a note for a hub name (else None).

    The server would otherwise fail only when it loads the model, seconds later and in its log.
    """
    path = Path(value).expanduser()
    if path.exists():
        if not path.is_dir():
            raise UserError(f"{flag} {value}: not a directory (a checkpoint is a folder with config.json)")
        if engine == "cpu" and not (path / "config.json").is_file():
            raise UserError(f"{flag} {value}: no config.json there, so it is not a Hugging Face checkpoint folder")
        return None
    if _looks_local(value):
        parent = next((p for p in path.parents if p.is_dir()), None)
        hint = ""
        if parent is not None:
            entries = sorted(e.name for e in parent.iterdir() if e.is_dir())[:8]
            hint = f" ({parent} holds: {', '.join(entries) or 'no folders'})"
        raise UserError(f"{flag} {value}: no such directory{hint}")
    where = "TensorRT-LLM in the container" if engine == "trtllm" else "the CPU engine (transformers)"
    return f"{flag} {value}: not a local path; {where} will resolve it as a Hugging Face model name when the model loads"


def _prepare_out(out: Path, name: str, force: bool) -> Path:
    """Return OUT/NAME ready to be written. --force replaces OUT/NAME only, never anything else."""
    if out.exists() and not out.is_dir():
        raise UserError(f"{out} exists and is not a directory")
    target = out / name
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise UserError(f"{out} is not empty; pass --force to replace {target} (other entries are kept)")
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            # name is validated to one path component, so target is a direct child of OUT.
            assert target.resolve().parent == out.resolve()
            shutil.rmtree(target)
    out.mkdir(parents=True, exist_ok=True)
    return target


def render(
    method: str,
    model: str | None,
    out: str | Path,
    engine: str = "cpu",
    draft_model: str | None = None,
    drafter: str | None = None,
    name: str = DEFAULT_NAME,
    max_batch_size: int | None = None,
    decoupled: bool | None = None,
    force: bool = False,
    trtllm_model_dir: str | Path | None = None,
    trtllm: str | None = None,
) -> Path:
    """Render ``method`` into the repository ``out`` as model ``name`` for the track ``trtllm`` (an id or
    alias; ``None``: the registry's default); return the model folder.

    Raises UserError for every mistake a reader can make. With ``engine="trtllm"`` and no
    container files at hand, the repository is still written and the UserError says what to copy.
    """
    import yaml

    track = Registry().resolve(trtllm)
    if method not in METHODS:
        raise UserError(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
    _methods.require(method, track.id)
    if engine not in ENGINES:
        raise UserError(f"unknown engine {engine!r}; choose cpu or trtllm")
    if not model and engine != "cpu":
        raise UserError("--model is required (a Hugging Face name or a local checkpoint directory)")
    if not _NAME_RE.match(name):
        raise UserError(f"--name {name!r}: use letters, digits, '_', '-', '.' (it becomes a folder name)")
    # Say first what cannot work at all, before asking for options it would need.
    refusals = CPU_REFUSES if engine == "cpu" else TRTLLM_REFUSES
    if method in refusals:
        raise UserError(f"{method} with --engine {engine}: {refusals[method]}")
    if engine == "cpu" and not model:
        # The CPU tier's default: the real model, fetched and converted once (specdec-guide models fetch),
        # and for Draft/Target the self-speculative draft made from it (specdec-guide models draft).
        from specdec_guide.models import smollm2

        model = str(smollm2.ensure_checkpoint())
        if method in NEEDS_DRAFT_MODEL and not draft_model:
            draft_model = str(smollm2.ensure_draft_checkpoint())
    if method in NEEDS_DRAFT_MODEL and not draft_model:
        raise UserError(f"{method} needs --draft-model (the draft model's local directory; a hub id too where the release downloads it)")
    if draft_model and method not in NEEDS_DRAFT_MODEL:
        raise UserError(f"--draft-model is only used by {', '.join(sorted(NEEDS_DRAFT_MODEL))}, not {method}")
    if drafter and method not in NEEDS_DRAFTER:
        raise UserError(f"--drafter is only used by {', '.join(sorted(NEEDS_DRAFTER))}, not {method}")
    if method in NEEDS_DRAFTER and engine == "cpu" and not drafter:
        raise UserError("user_provided needs --drafter module:Class (a drafter class the CPU engine imports)")
    if drafter and not _DRAFTER_RE.match(drafter):
        raise UserError(f"--drafter {drafter!r}: expected module:Class or file.py:Class, e.g. my_pkg.drafters:MyDrafter")
    drafter_file = None
    if drafter and drafter.split(":")[0].endswith(".py"):
        # A drafter file is copied next to model.yaml, so the repository is self-contained.
        drafter_file = Path(drafter.split(":")[0])
        if not drafter_file.is_file():
            raise UserError(f"--drafter: {drafter_file} not found")
        if drafter_file.name in ("model.py", "helpers.py"):
            raise UserError(f"--drafter: rename {drafter_file.name}; that name is taken by the Triton model")
        drafter = f"{drafter_file.name}:{drafter.split(':')[1]}"
    if max_batch_size is not None and max_batch_size < 0:
        raise UserError("--max-batch-size must be >= 0")
    if draft_model and engine == "trtllm":
        _check_draft_hub_id(draft_model, track)
    notes = [check_model_path("--model", model, engine)]
    if draft_model:
        notes.append(check_model_path("--draft-model", draft_model, engine))
    for note in filter(None, notes):
        print(note, file=sys.stderr)

    def local(p: str) -> str:
        # A path that exists here is made absolute: model.py runs with another working directory.
        return str(Path(p).expanduser().resolve()) if Path(p).expanduser().exists() else p

    values = {"MODEL": local(model)}
    if draft_model:
        values["DRAFT_MODEL"] = local(draft_model)
    if drafter:
        values["DRAFTER"] = drafter

    from specdec_guide.diagnostics import read_utf8, yaml_position

    src = template_dir(method)
    yaml_path = src / "1" / "model.yaml"
    try:
        text = for_track(_fill_model_yaml(read_utf8(yaml_path), values, max_batch_size, decoupled), method, track,
                         yaml_path)
    except UserError as err:
        msg = str(err)
        raise UserError(msg if msg.startswith(str(yaml_path)) else f"{yaml_path}:1:1: {msg}") from None
    try:
        filled = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError) as err:  # a broken template: where, in the template's own lines
        line, col = yaml_position(err)
        raise UserError(f"{yaml_path}:{line}:{col}: the template is not valid YAML: "
                        f"{getattr(err, 'problem', None) or err}") from None
    left = _leftover_markers(filled)
    if left:
        first = next((n for n, ln in enumerate(text.splitlines(), 1) if "${" in ln and not ln.lstrip().startswith("#")), 1)
        raise UserError(f"{yaml_path}:{first}:1: template {method} still has unfilled markers: {'; '.join(left)}")
    triton_config = (filled.get("triton_config") if isinstance(filled, dict) else None) or {}
    if not isinstance(triton_config, dict):
        raise UserError(f"{yaml_path}:1:1: the template's triton_config is not a mapping")
    config = _fill_config(read_utf8(src / "config.pbtxt"), triton_config, src / "config.pbtxt")
    config = config_for_track(config, track, written_for(read_utf8(yaml_path), yaml_path))
    if name != DEFAULT_NAME:
        config, n = re.subn(r'(?m)^name:\s*"[^"]*"', f'name: "{name}"', config, count=1)
        if n != 1:
            raise UserError(f"{src / 'config.pbtxt'}:1:1: the template has no name: \"...\" line to set")

    out = Path(out)
    target = _prepare_out(out, name, force)
    (target / "1").mkdir(parents=True)
    (target / "config.pbtxt").write_text(config)
    # The trtllm= line names the track: the CPU stand-in answers as that release, and `specdec-guide
    # validate` and `doctor` check the file against its snapshot.
    stamp = (f"# Rendered by `specdec-guide repo render --method {method} --engine {engine}` from "
             f"model_repo_templates/llmapi/{method}.\n# specdec-guide: trtllm={track.id}\n"
             + ("# specdec-guide: engine=cpu\n" if engine == "cpu" else ""))
    (target / "1" / "model.yaml").write_text(stamp + text)
    if drafter_file is not None:
        shutil.copyfile(drafter_file, target / "1" / drafter_file.name)

    if engine == "cpu":
        model_py = _PKG / "engine" / "model.py"
        if not model_py.exists():
            raise UserError(f"CPU engine model.py not found at {model_py}")
        shutil.copyfile(model_py, target / "1" / "model.py")
        return target

    container_dir, files = _container_model_files(track)
    src_dir = Path(trtllm_model_dir) if trtllm_model_dir else Path(container_dir)
    missing = [f for f in files if not (src_dir / f).is_file()]
    if missing:
        dest = target.resolve() / "1"
        print(
            f"TensorRT-LLM's llmapi model files are not here ({src_dir}). Copy {', '.join(files)} from\n"
            f"  {container_dir}/ in {track.container} into {dest}/, e.g.:\n"
            f"  docker run --rm -v {dest}:/dst {track.container} \\\n"
            f"    cp {' '.join(f'{container_dir}/{f}' for f in files)} /dst/",
            file=sys.stderr,
        )
        raise UserError(f"{target} rendered without model.py: copy it from the container (see above)", exit_code=3)
    for f in files:
        shutil.copyfile(src_dir / f, target / "1" / f)
    return target


def _run(args) -> int:
    target = render(
        args.method, args.model, args.out, engine=args.engine, draft_model=args.draft_model,
        drafter=args.drafter, name=args.name, max_batch_size=args.max_batch_size, decoupled=args.decoupled, force=args.force,
        trtllm_model_dir=args.trtllm_model_dir, trtllm=args.trtllm,
    )
    print(f"rendered {args.method} ({args.engine} engine) into {target}")
    if args.engine == "cpu":
        print(f"start it: specdec-guide triton up --repo {Path(args.out)}")
    return 0


def _bool(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise ValueError(text)


def register(subparsers) -> None:
    repo = subparsers.add_parser("repo", help="model repositories from the guide's templates")
    sub = repo.add_subparsers(dest="repo_command", metavar="SUBCOMMAND", required=True)
    p = sub.add_parser("render", help="render a llmapi template into a Triton model repository")
    p.add_argument("--method", required=True, choices=METHODS)
    p.add_argument("--model", help="target model: HF name or local checkpoint dir (--engine cpu default: "
                   "SmolLM2-135M-Instruct from `specdec-guide models fetch`, fetched if needed)")
    p.add_argument("--draft-model", help="draft model (draft_target) or EAGLE-3 head (eagle3): a local directory "
                   "(--engine trtllm: refused as a hub id where the track's release does not download one here); "
                   "--engine cpu without --model defaults it to `specdec-guide models draft`")
    p.add_argument("--trtllm", metavar="TRACK", help="TensorRT-LLM track to render for, an id or alias "
                   "(1.1.0, latest, ...; default: tracks.yaml's default): its keys, spellings and container")
    p.add_argument("--drafter", help="user_provided, CPU engine: drafter class as module:Class, or "
                   "file.py:Class (the file is copied into the model folder)")
    p.add_argument("--engine", choices=ENGINES, default="cpu",
                   help="cpu: our reference engine's model.py; trtllm: the container's llmapi model.py")
    p.add_argument("--out", required=True, help="model repository folder (the model goes to OUT/NAME)")
    p.add_argument("--name", default=DEFAULT_NAME, help="model name (default tensorrt_llm, as the guide's URLs use)")
    p.add_argument("--max-batch-size", type=int, help="max_batch_size, written to both config.pbtxt and "
                   "triton_config (template: 0)")
    p.add_argument("--decoupled", type=_bool, metavar="true|false",
                   help="decoupled policy, written to both config.pbtxt and triton_config (template: true). "
                   "Streaming needs true; tritonclient's unary infer() (HTTP or gRPC) needs false")
    p.add_argument("--force", action="store_true", help="OUT may be non-empty; OUT/NAME is replaced, nothing else")
    p.add_argument("--trtllm-model-dir", help="--engine trtllm: folder with the llmapi model.py and helpers.py "
                   "(default: the container's /app/all_models/llmapi/tensorrt_llm/1)")
    p.set_defaults(func=_run)
