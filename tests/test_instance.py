"""Instance: construction, validation messages, placements, round trips."""

from fractions import Fraction

import pytest

from schedules import Instance, InstanceError


def test_defaults_and_derived():
    inst = Instance(P=4, m=8)
    assert (inst.S, inst.K, inst.f, inst.b, inst.split) == (4, None, 1, 2, False)
    assert inst.stage_to_rank == (0, 1, 2, 3)


def test_placements():
    assert Instance(P=3, m=1, v=2).stage_to_rank == (0, 1, 2, 0, 1, 2)
    assert Instance(P=3, m=1, v=2, placement="vshape").stage_to_rank == (0, 1, 2, 2, 1, 0)
    assert Instance(P=2, m=1, v=3, placement="vshape").stage_to_rank == (0, 1, 1, 0, 0, 1)


def test_explicit_stage_to_rank():
    inst = Instance(P=2, m=1, stage_to_rank=[1, 0, 0, 1])
    assert inst.v == 2 and inst.placement == "explicit" and inst.gpu(0) == 1
    with pytest.raises(InstanceError, match="exactly v=2 stages"):
        Instance(P=2, m=1, stage_to_rank=[0, 0, 0, 1])
    with pytest.raises(InstanceError, match="outside 0..1"):
        Instance(P=2, m=1, stage_to_rank=[0, 2])


def test_explicit_list_equal_to_a_named_placement_is_named():
    a = Instance(P=2, m=1, v=2, placement="vshape", stage_to_rank=(0, 1, 0, 1))
    b = Instance(P=2, m=1, v=2, stage_to_rank=(0, 1, 0, 1))
    assert a.placement == b.placement == "looped" and a == b
    assert Instance(P=2, m=1, stage_to_rank=(0, 1, 1, 0)).placement == "vshape"
    # v = 1: both named placements are the identity; the one passed is kept
    assert Instance(P=2, m=1, placement="vshape", stage_to_rank=(0, 1)).placement == "vshape"


def test_split_durations():
    inst = Instance(P=2, m=2, b_I="1/2", b_W=1)
    assert inst.split and inst.b == Fraction(3, 2) and inst.unit == 2
    with pytest.raises(InstanceError, match="contradicts"):
        Instance(P=2, m=2, b=3, b_I=1, b_W=1)
    with pytest.raises(InstanceError, match="both b_I and b_W"):
        Instance(P=2, m=2, b_I=1)


@pytest.mark.parametrize("kwargs, message", [
    (dict(P=0, m=1), "P must be >= 1"),
    (dict(P=1, m=0), "m must be >= 1"),
    (dict(P=1, m=1, K=0), "K must be >= 1"),
    (dict(P=1, m=1, v=0), "v must be >= 1"),
    (dict(P=1, m=1, f=0), "f .* must be > 0"),
    (dict(P=1, m=1, b=-1), "b .* must be > 0"),
    (dict(P=1, m=1, b_I=0, b_W=1), "b_I .* must be > 0"),
    (dict(P=1, m=1, f="x"), "f must be a number"),
    (dict(P=1, m=1, placement="zigzag"), "placement must be one of"),
    (dict(P=1.5, m=1), "P must be a whole number"),
    (dict(P=1, m=1, c=-1), "c .* must be >= 0"),
])
def test_bad_fields_name_the_problem(kwargs, message):
    with pytest.raises(InstanceError, match=message):
        Instance(**kwargs)


def test_K_inf_spellings():
    assert Instance(P=1, m=1, K="inf").K is None
    assert Instance(P=1, m=1, K=float("inf")).K is None
    assert Instance(P=1, m=1, K="3").K == 3


def test_dict_round_trip_and_with():
    inst = Instance(P=3, m=5, K=2, v=2, placement="vshape", f="3/2", b_I=1, b_W=2)
    again = Instance.from_dict(inst.to_dict())
    assert again == inst
    assert inst.with_(K=None).K is None and inst.with_(K=None).b_I == 1
    fused = inst.with_(b_I=None, b_W=None, b=5)
    assert not fused.split and fused.b == 5


def test_every_toolkit_exception_derives_from_the_one_root():
    """networkx's pattern: one root, each class also the built-in it specialises."""
    import inspect
    import pkgutil
    import importlib

    import bounds
    import pipebounds
    import schedules
    from schedules.errors import PipeboundsError

    found = {}
    for pkg in (schedules, bounds, pipebounds):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if info.name.endswith("__main__") or ".torch" in info.name:
                continue
            mod = importlib.import_module(info.name)
            for name, obj in vars(mod).items():
                if (inspect.isclass(obj) and issubclass(obj, Exception) and not name.startswith("_")
                        and obj.__module__ == mod.__name__):
                    found[name] = obj
    assert len(found) >= 17, sorted(found)
    outside = sorted(n for n, c in found.items() if not issubclass(c, PipeboundsError))
    assert not outside, f"exceptions outside the root: {outside}"
    assert issubclass(found["InstanceError"], ValueError)
