"""``specdec-guide validate``: snippets, templates, notebooks and pages checked against the
schema snapshot of a pinned TensorRT-LLM track (``schemas/<version>/``).

The tracks and their snapshots come from :mod:`specdec_guide.releases.tracks`.
Modules: ``typegrammar`` and ``values`` (the type
strings and positioned values), ``fields`` (class/union field checks), one checker per file
kind (``pbtxt``, ``llm_yaml``, ``python_ast``, ``shell``, ``pages``, ``notebook``), ``kinds`` (which
file is which), ``walk`` (which files a folder holds: no .git, virtual environments, git-ignored or
excluded paths), ``verified`` (how each snippet is verified, for the page rule and ``coverage``),
``runner`` (dispatch) and ``command`` (the CLI).
"""
