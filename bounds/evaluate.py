"""Exact evaluation of the lower bound of one instance.

The bound is the maximum of the applicable terms; each term is a theorem of docs/theory.md or
docs/theory_multiwave.md, named by its id in :data:`TERM_IDS` (T0, T1, ..., MW9), which is
derived from the registry :mod:`bounds.theorems`. Modules contribute terms through a function
``terms(inst) -> list[(name, value, exact)]``: :mod:`bounds.single_wave` for ``v = 1`` (with
:func:`bounds.multi_wave.v1_terms`, the multi-wave theorems proven at ``v = 1`` too: MW11),
:mod:`bounds.multi_wave` for ``v >= 2``. ``exact`` is True only where a *theorem* proves that
term equal to the optimum for this instance (a pure condition on the instance, the exact case
registered with the theorem: no search, no simulation). Exactness by an exhaustively checked
range, a row of pipebounds/data/optima.jsonl, a certificate schedule or a solver proof is decided above the
bounds, by :mod:`pipebounds.certify`.

Cost: every bound is positively homogeneous in the durations (scaling ``f, b, b_I, b_W, c`` by
``λ > 0`` scales it by ``λ``), so :func:`lower_bound` evaluates the terms on the instance with
durations in integer units of ``1/unit`` (:class:`ScaledInstance`; Python integers instead of
Fractions) and divides once at the end. Single wave: ``O(P)``; multi-wave: ``O(P v^2)`` (MW1)
plus ``O(P v log(v m))`` (MW7), independent of ``m`` otherwise; instances above
:data:`MULTI_WAVE_LIMIT` are refused with :class:`BoundLimitError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Optional, Union, cast

from schedules.instance import Instance, require
from schedules.limits import LimitError

from .backward_remat import terms as backward_terms
from .directions import terms as directions_terms
from .heterogeneous import crossings
from .heterogeneous import terms as hetero_terms
from .heterogeneous_memory import terms as hetero_memory_terms
from .multi_wave import terms as multi_wave_terms
from .multi_wave import v1_terms
from .single_wave import terms as single_wave_terms
from .theorems import SINGLE, exact_theorems, term_exact, term_ids, theorem

Value = Union[int, Fraction]


def chain_exact(inst: Instance) -> bool:
    """T0's exact case: one microbatch on a single wave, no delay (the chain itself is a
    schedule holding one activation per GPU)."""
    return inst.m == 1 and inst.v == 1 and not inst.c

MULTI_WAVE_LIMIT = 1 << 20
"""Largest ``P v^2`` the multi-wave bound evaluates (MW1 is quadratic in the ``2v`` or ``3v``
op types of a GPU; about a second at the limit). Larger instances raise
:class:`BoundLimitError`."""

SINGLE_WAVE_LIMIT = 1 << 17
"""Largest ``P`` the single-wave bound evaluates with finite ``K`` (T2, T3 and S3 are
maxima over the ``P`` GPUs, ``O(P)``; about a second at the limit)."""


class BoundLimitError(LimitError):
    """The instance is larger than the bound evaluates (the message names the limit)."""


@dataclass(frozen=True)
class LowerBound:
    """``value`` = max of ``terms`` (name -> exact value); ``exact`` iff a theorem proves it
    equal to OPT, ``theorem`` that theorem's id (None when not exact)."""

    value: Fraction
    terms: tuple[tuple[str, Fraction], ...]
    exact: bool = False
    theorem: Optional[str] = None

    @property
    def term_ids(self) -> "TermIds":
        """The theorem id of every term, in the order of ``terms`` (an attribute, as ``terms``
        is; calling it, ``lb.term_ids()``, the former method, gives the same tuple)."""
        return TermIds(TERM_IDS[name] for name, _ in self.terms)

    @property
    def binding(self) -> tuple[str, ...]:
        """The names of the terms equal to ``value`` (the maximum), in order."""
        return tuple(name for name, v in self.terms if v == self.value)


class TermIds(tuple):
    """A tuple of theorem ids that may also be called (``lb.term_ids()``, the former method,
    returns it unchanged), so callers of either form keep working."""

    def __call__(self) -> "TermIds":
        return self


@dataclass(frozen=True)
class ScaledInstance:
    """An :class:`~schedules.instance.Instance` with its durations multiplied by ``unit`` (so
    integers): the bound functions accept it in place of an Instance (same attributes) and
    return values ``unit`` times the instance's."""

    P: int
    m: int
    K: Optional[int]
    v: int
    placement: str
    stage_to_rank: tuple[int, ...]
    f: int
    b: int
    b_I: Optional[int]
    b_W: Optional[int]
    c: int

    # the derived attributes are the Instance's own (they read only the fields above)
    S = Instance.S
    split = Instance.split
    gpu = Instance.gpu
    stages_of = Instance.stages_of


def scaled(inst: Instance) -> ScaledInstance:
    """``inst`` with integer durations in units of ``1/inst.unit``."""
    u = inst.unit

    def i(x):  # x * u, an integer (u is a multiple of x's denominator)
        return x.numerator * (u // x.denominator)

    return ScaledInstance(inst.P, inst.m, inst.K, inst.v, inst.placement, inst.stage_to_rank,
                          i(inst.f), i(inst.b), None if inst.b_I is None else i(inst.b_I),
                          None if inst.b_W is None else i(inst.b_W), i(inst.c))


@theorem("T0", "work and chain", SINGLE + "A.3 Theorem 0 (work and chain)",
         terms=("work", "critical_path"), exact=chain_exact, exact_terms=("critical_path",))
def work_and_chain_value(inst: Instance) -> Value:
    """T0: the larger of :func:`basic_terms`."""
    return max(x for _, x, _ in basic_terms(inst))


TERM_IDS: dict[str, str] = term_ids()
"""The theorem id (docs/theory.md, docs/theory_multiwave.md) of every term name, derived from
:mod:`bounds.theorems` (each term belongs to one theorem). The exact case of ``mw_gpu_subset``
at ``m = 1, K = 1`` is MW8d (:func:`exact_theorem`)."""

_EXACT_IDS: dict[str, str] = {n: th.id for n, th in exact_theorems().items()}


def basic_terms(inst: Instance) -> list[tuple[str, Value, bool]]:
    """Terms valid for every instance (T0): the busiest GPU's work ``v m (f+b)`` and one
    microbatch's chain ``S f + S b`` (split: ``S f + S b_I + b_W``).

    The chain is exact for a single microbatch on a single wave (``m = 1, v = 1``: the chain
    itself is a schedule, holding one activation per GPU; docs/theory.md, Theorem 0).

    >>> [(n, int(x), e) for n, x, e in basic_terms(Instance(P=4, m=1, K=1))]
    [('work', 3, False), ('critical_path', 12, True)]
    """
    work = inst.v * inst.m * (inst.f + inst.b)
    if inst.b_I is not None and inst.b_W is not None:  # split: the chain's backward ops are I
        chain = inst.S * inst.f + inst.S * inst.b_I + inst.b_W
    else:
        chain = inst.S * inst.f + inst.S * inst.b
    if inst.c:  # c at each GPU crossing of the chain (docs/theory.md, H2)
        chain += inst.c * crossings(inst)  # type: ignore[arg-type]
    return [("work", work, False), ("critical_path", chain, term_exact("critical_path", inst))]


def check_limits(inst: Instance) -> None:
    """Raise :class:`BoundLimitError` when ``inst`` is above :data:`MULTI_WAVE_LIMIT` or
    :data:`SINGLE_WAVE_LIMIT`."""
    if inst.v >= 2 and inst.P * inst.v * inst.v > MULTI_WAVE_LIMIT:
        raise BoundLimitError(
            f"the multi-wave bound evaluates P*v^2 <= {MULTI_WAVE_LIMIT} (MW1 is quadratic in v "
            f"per GPU); got P={inst.P}, v={inst.v}")
    if inst.v == 1 and inst.K is not None and inst.P > SINGLE_WAVE_LIMIT:
        raise BoundLimitError(
            f"the single-wave bound with finite K evaluates P <= {SINGLE_WAVE_LIMIT} "
            f"(a maximum over the GPUs); got P={inst.P}")


def exact_theorem(name: str) -> str:
    """The id of the theorem whose exact case makes term ``name`` exact (its own, except MW1's
    exact case at ``m = 1, K = 1``, which is MW8d): :func:`bounds.theorems.exact_theorems`."""
    return _EXACT_IDS.get(name) or TERM_IDS[name]


def lower_bound(inst: Instance, backward_remat: bool = False) -> LowerBound:
    """The best proven lower bound on the makespan of every feasible schedule of ``inst``.

    Never searches or simulates: ``exact`` only for a theorem's exact case.

    ``backward_remat``: the bound over the full model, where a split schedule may also
    recompute a pair between its ``I`` and its ``W`` (MODEL.md, Extensions; docs/theory.md
    A.11): the memory terms are replaced by their backward forms (:mod:`bounds.backward_remat`,
    ids ending in ``r``), never claimed exact except the chain's ``m = 1, v = 1``. No effect on a fused
    instance (a backward recompute needs ``I`` and ``W``).

    >>> lb = lower_bound(Instance(P=3, m=4, K=1, f=3, b=2))
    >>> lb.value, lb.exact, dict(lb.terms)["single_slot"]
    (Fraction(34, 1), False, Fraction(34, 1))
    >>> lower_bound(Instance(P=2, m=4, K=1, f=3, b=2)).theorem
    'T3'
    >>> inst = Instance(P=3, m=3, K=2, f=3, b_I=3, b_W=1)
    >>> lower_bound(inst).value, lower_bound(inst, backward_remat=True).value
    (Fraction(32, 1), Fraction(31, 1))
    """
    require(inst, Instance, "inst", "lower_bound")
    backward = bool(backward_remat) and inst.split
    if inst.directions != 1:
        return _directions_bound(inst)
    if inst.overlapped:
        return _overlap_bound(inst, backward)
    if not inst.uniform:
        return _extension_bound(inst, [], backward)
    check_limits(inst)
    view = cast(Instance, scaled(inst))
    raw: list[tuple[str, Value, bool]]
    if backward:
        raw = [*basic_terms(view), *backward_terms(view)]
    else:
        raw = [*basic_terms(view), *([*single_wave_terms(view), *v1_terms(view)]
                                     if inst.v == 1 else multi_wave_terms(view))]
    u = inst.unit
    terms = tuple((n, Fraction(x, u) if isinstance(x, int) else x / u) for n, x, _ in raw)
    if inst.c or inst.memory is not None:
        return _extension_bound(inst, [(n, x, ex) for (n, x), (_, _, ex) in zip(terms, raw)],
                                backward)
    value = max(x for _, x in terms)
    theorem = None
    for (name, x), (_, _, ex) in zip(terms, raw):
        if ex and x == value:
            theorem = exact_theorem(name)
            break
    return LowerBound(value, terms, theorem is not None, theorem)


def _directions_bound(inst: Instance) -> LowerBound:
    """The bidirectional model (``directions = 2``, MODEL.md): only theorem D1
    (:mod:`bounds.directions`), valid with or without ``F&B`` ops, recomputation (of either
    kind), ``c`` and memory limits; never exact. The one-chain theorems are not applied."""
    raw = directions_terms(inst)
    return LowerBound(max(x for _, x, _ in raw), tuple((n, x) for n, x, _ in raw))


def _overlap_bound(inst: Instance, backward: bool = False) -> LowerBound:
    """Overlapped ``F&B`` durations (theorem OV1, :mod:`bounds.overlap`): every term of the
    instance without them, scaled by ``ρ'``; never exact. ``backward``: the base bound over the
    full model (docs/theory.md A.11)."""
    from .overlap import overlap_factor, without_overlaps

    rho = overlap_factor(inst)
    base = lower_bound(without_overlaps(inst), backward_remat=backward)
    return LowerBound(rho * base.value, tuple((n, rho * x) for n, x in base.terms))


def _extension_bound(inst: Instance, uniform_terms: list, backward: bool = False) -> LowerBound:
    """Per-stage costs, ``c > 0`` or memory in bytes (MODEL.md, Extensions): the terms H1-H3 of
    :mod:`bounds.heterogeneous` and H4-H10 of :mod:`bounds.heterogeneous_memory` (valid for
    every instance; ``backward``: their forms with backward recomputation), with the uniform
    theorems' ``uniform_terms`` when the durations are uniform (they stay valid: delays and a
    byte budget only lengthen or remove schedules). Exactness: only H2's own proof (m = 1,
    v = 1, no byte budget) and, for ``c = 0`` without a byte budget, the uniform theorems'."""
    budget = inst.memory is not None and inst.memory.budget is not None
    kept = [(n, x, ex and not inst.c and not budget) for n, x, ex in uniform_terms]
    terms = kept + hetero_terms(inst) + hetero_memory_terms(inst, backward)
    value = max(t[1] for t in terms)
    theorem = next((exact_theorem(n) for n, x, ex in terms if ex and x == value), None)
    return LowerBound(value, tuple((n, x) for n, x, _ in terms), theorem is not None, theorem)
