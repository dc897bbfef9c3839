"""How indexes sit on disk: the one room that knows.

Everything above sees a narrow interface: ``Store`` (one repository's index in one cache folder: its file
table, a builder lock, ``Batch`` commits) and ``View`` (one committed generation, mapped read-only).
A second backend (e.g. a Qdrant server) would implement the same two classes.

Modules: ``layout`` (cache folders, listing, removal; light to import), ``manifest`` (SQLite, lock),
``segment`` (immutable segment files), ``view`` (a mapped generation), ``merge``.
"""
