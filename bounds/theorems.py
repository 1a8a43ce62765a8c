"""The one registry of theorems: id, statement, terms, exact case and docs section of each.

Every theorem and lemma of docs/theory.md, docs/theory_multiwave.md and docs/theory_frontier.md
(T0, T1, ..., S1-S4, H1-H3, MW0-MW11, KF0-KF4 and the lemma ids T3b, T3c, MW6a, ...) has one
:class:`Theorem` here, registered by the :func:`theorem` decorator placed beside its value
function in the formula module (:mod:`bounds.single_wave`, :mod:`bounds.multi_wave`,
:mod:`bounds.heterogeneous`, :mod:`bounds.frontier`, :mod:`bounds.evaluate`)::

    @theorem("T1", "fill-drain", doc=SINGLE + "A.4 Theorem 1 (fill-drain) and 1F1B",
             terms=("fill_drain",), exact=fill_drain_exact)
    def fill_drain_value(inst): ...

Everything else reads it: :data:`bounds.evaluate.TERM_IDS` (term name -> id),
the exact flag of each term of :func:`bounds.lower_bound` (:func:`term_exact`: the exact case of
the one theorem that proves that term optimal), and proofs_checks/registry.py (the machine
checks, keyed by these ids). This module imports nothing of :mod:`bounds`; :func:`all_theorems`
imports the formula modules, so the table is complete however the caller got here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

SINGLE = "docs/theory.md#"
MULTI = "docs/theory_multiwave.md#"
FRONTIER = "docs/theory_frontier.md#"
"""Prefixes of :attr:`Theorem.doc` (``file#section heading``)."""

FORMULA_MODULES = ("bounds.evaluate", "bounds.single_wave", "bounds.multi_wave",
                   "bounds.heterogeneous", "bounds.heterogeneous_memory",
                   "bounds.backward_remat", "bounds.frontier", "bounds.overlap",
                   "bounds.directions")
"""The modules whose decorators fill the registry."""


@dataclass(frozen=True)
class Theorem:
    """One theorem (or lemma) of the docs.

    ``id``: as in the status table of its doc (``T1``, ``MW8d``, ``KF2``); ``title``: a short
    statement; ``doc``: ``file#section heading`` where it is stated and proven; ``bound``: the
    function evaluating it for one instance (None for a lemma without a value of its own, such
    as MW0); ``terms``: the names of the :func:`bounds.lower_bound` terms that evaluate it
    (each term name belongs to exactly one theorem); ``exact``: the pure condition on the
    instance under which it is proven equal to the optimum (None: never claimed);
    ``exact_terms``: the terms that ``exact`` makes optimal (default: ``terms`` when ``exact``
    is given; MW8d makes MW1's term ``mw_gpu_subset`` exact at ``m = 1, K = 1``); ``lemma``: a
    step of a proof or a construction rather than a bound of its own.
    """

    id: str
    title: str
    doc: str
    bound: Optional[Callable] = field(default=None, repr=False, compare=False)
    exact: Optional[Callable] = field(default=None, repr=False, compare=False)
    terms: tuple[str, ...] = ()
    exact_terms: tuple[str, ...] = ()
    lemma: bool = False


_REGISTRY: dict[str, Theorem] = {}


def _register(th: Theorem) -> None:
    if th.id in _REGISTRY:
        raise ValueError(f"theorem {th.id} is registered twice")
    if not th.doc.startswith((SINGLE, MULTI, FRONTIER)):
        raise ValueError(f"theorem {th.id}: doc must be a docs/theory*.md#section, got {th.doc!r}")
    _REGISTRY[th.id] = th


def theorem(id: str, title: str, doc: str, terms: tuple[str, ...] = (),
            exact: Optional[Callable] = None, exact_terms: Optional[tuple[str, ...]] = None,
            lemma: bool = False) -> Callable:
    """Register the decorated value function as the bound of theorem ``id`` (fields as in
    :class:`Theorem`) and return it unchanged; decorators stack (one function may evaluate a
    theorem and its lemmas)."""
    def deco(func: Callable) -> Callable:
        ex_terms = tuple(exact_terms) if exact_terms is not None else (
            tuple(terms) if exact is not None else ())
        _register(Theorem(id, title, doc, func, exact, tuple(terms), ex_terms, lemma))
        return func

    return deco


def declare(id: str, title: str, doc: str, lemma: bool = True) -> None:
    """Register a theorem without a value function (a lemma used by proofs, such as MW0)."""
    _register(Theorem(id, title, doc, lemma=lemma))


def all_theorems() -> dict[str, Theorem]:
    """Theorem id -> :class:`Theorem`, every theorem of the docs (imports the formula modules)."""
    import importlib

    for name in FORMULA_MODULES:
        importlib.import_module(name)
    return dict(_REGISTRY)


def term_ids() -> dict[str, str]:
    """Term name -> the id of the theorem it evaluates, over the theorems registered so far."""
    out: dict[str, str] = {}
    for th in _REGISTRY.values():
        for name in th.terms:
            if name in out:
                raise ValueError(f"term {name!r} is claimed by {out[name]} and {th.id}")
            out[name] = th.id
    return out


def exact_theorems() -> dict[str, Theorem]:
    """Term name -> the theorem whose exact case proves that term optimal (registered so far)."""
    out: dict[str, Theorem] = {}
    for th in _REGISTRY.values():
        for name in th.exact_terms:
            if name in out:
                raise ValueError(f"term {name!r} is made exact by {out[name].id} and {th.id}")
            out[name] = th
    return out


_EXACT: dict[str, Theorem] = {}
_EXACT_SIZE = [-1]


def term_exact(name: str, inst) -> bool:
    """Whether a theorem proves term ``name`` equal to the optimum of ``inst`` (the exact case
    of the theorem of :func:`exact_theorems`; False when none claims it)."""
    if _EXACT_SIZE[0] != len(_REGISTRY):  # rebuilt when a module has registered more
        _EXACT.clear()
        _EXACT.update(exact_theorems())
        _EXACT_SIZE[0] = len(_REGISTRY)
    th = _EXACT.get(name)
    return th is not None and bool(th.exact(inst))  # type: ignore[misc]


__all__ = ["Theorem", "theorem", "declare", "all_theorems", "term_ids", "exact_theorems",
           "term_exact", "SINGLE", "MULTI", "FRONTIER", "FORMULA_MODULES"]
