"""The I/O layer: files and folders in, mirrored files out, one per-file job per command.

``io`` is what every job shares: which inputs and outputs (refusing to overwrite an input),
reading, sniffing, atomic writes and the batch runner. Each command's job sits in the module
named after it, as its flags sit in ``cli/<command>.py``: ``compact`` (compact and prune),
``report``, ``replay``, ``eval``, ``review``. Everything below this package takes messages and
returns values; only this package and the CLI read and write transcripts.
"""
