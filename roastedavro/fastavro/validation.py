"""``fastavro.validation``: fastavro's own ``validate``, ``validate_many``,
``ValidationError`` and ``ValidationErrorData`` (validation returns a
verdict and moves no data; the drop-in's ``writer(..., validator=True)``
raises the same ValidationError)."""

from __future__ import annotations

from roastedavro.fastavro._submodule import forwarder

__getattr__ = forwarder("roastedavro.fastavro.validation", "fastavro.validation", {})
