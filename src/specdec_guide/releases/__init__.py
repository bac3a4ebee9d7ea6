"""What this guide knows about the pinned releases, and the one place that reads it.

Modules: ``tracks`` (``schemas/tracks.yaml``: :class:`~specdec_guide.releases.tracks.Registry`,
:class:`~specdec_guide.releases.tracks.Track` and the per-track snapshot files), ``methods``
(``schemas/methods.yaml``: the methods this guide teaches and the tracks each exists on),
``behaviour`` (``schemas/<track>/behaviour/``: what a release does, fact by fact) and
``containers`` (``schemas/containers.yaml``: which TensorRT-LLM each Triton container ships).
The validator, the CPU engine, the templates, the site and the tests read release data from here;
the YAML stays under ``schemas/`` as package data. Nothing here imports the validator.
"""
