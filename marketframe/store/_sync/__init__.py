"""The sync: plan the windows a store is missing, fetch them (:mod:`._run`), write and record
them (:mod:`._commit`); one ``Store.sync`` call around it (:mod:`._call`)."""

from marketframe.store._sync._run import run

__all__ = ["run"]
