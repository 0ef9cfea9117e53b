"""Generators of files kept in the repository: ``docs/endpoints.md``, ``docs/errors.md`` and the
typed client tree ``marketframe/client/_tree.pyi``. Run ``python -m marketframe._gen`` after
changing an endpoint row; tests fail when a generated file is stale."""
