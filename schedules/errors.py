"""The one exception root of the toolkit (the pattern of networkx's ``NetworkXError``).

Every exception the library raises on purpose derives from :class:`PipeboundsError`, so a caller
can catch everything the toolkit means with one clause, and the command line turns it into one
line on stderr with exit status 2 in one place (:func:`pipebounds.cli.main`). The concrete
classes live beside the code that raises them (``InstanceError`` in :mod:`schedules.instance`,
``DocumentError`` in :mod:`schedules.io`, ...); each also derives from the built-in exception it
specialises (``ValueError`` for bad input), so ``except ValueError`` keeps working.

>>> from schedules import Instance
>>> try:
...     Instance(P=0, m=1)
... except PipeboundsError as exc:
...     print(type(exc).__name__)
InstanceError
"""

from __future__ import annotations


class PipeboundsError(Exception):
    """Root of every exception the toolkit raises on purpose."""


class InputError(PipeboundsError, ValueError):
    """Bad input: an instance, a document, a number, a grid or a request the toolkit refuses
    (the message names the problem). The root of the input errors of every layer."""
