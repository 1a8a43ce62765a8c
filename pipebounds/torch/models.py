"""The built-in small models of ``pipebounds execute`` and ``pipebounds profile``, cut into stages.

* ``mlp``: stage ``s`` is ``Linear(d, d)`` then ``tanh``; microbatches are ``(B, d)`` tensors.
* ``transformer``: stage ``s`` is one pre-norm transformer block (multi-head self-attention and a
  ``4d`` feed-forward, no dropout); microbatches are ``(B, T, d)`` tensors.

The loss of a microbatch is the mean squared error of the last stage's output against a random
target. Everything is built from a seed, so every rank builds the same model and keeps its own
stages, and a sequential reference is the same computation on one process.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

MODELS = ("mlp", "transformer")


@dataclass(frozen=True)
class ModelSpec:
    """A built-in model: ``name`` (``mlp`` or ``transformer``), ``width`` ``d``, ``seq`` ``T``
    (transformer only), ``heads``, ``microbatch_size`` ``B``, ``dtype`` (``float64`` or
    ``float32``) and the ``seed`` of its parameters and data."""

    name: str = "mlp"
    width: int = 8
    seq: int = 8
    heads: int = 2
    microbatch_size: int = 4
    dtype: str = "float64"
    seed: int = 0

    def __post_init__(self):
        if self.name not in MODELS:
            raise ValueError(f"unknown model {self.name!r}; built-in models: {', '.join(MODELS)}")
        for key in ("width", "seq", "heads", "microbatch_size"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{key} must be a whole number >= 1, got {value!r}")
        if self.name == "transformer" and self.width % self.heads:
            raise ValueError(f"width {self.width} is not a multiple of heads {self.heads}")
        if self.dtype not in ("float64", "float32"):
            raise ValueError(f"dtype must be float64 or float32, got {self.dtype!r}")

    @property
    def torch_dtype(self):
        return getattr(torch, self.dtype)


class MLPStage(nn.Module):
    """``tanh(Linear(d, d)(x))``."""

    def __init__(self, d: int):
        super().__init__()
        self.linear = nn.Linear(d, d)

    def forward(self, x):
        return torch.tanh(self.linear(x))


class TransformerStage(nn.Module):
    """One pre-norm block: ``x + attn(ln1(x))``, then ``+ ff(ln2(.))`` with a GELU ``4d``
    feed-forward."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.ff(self.ln2(x))


def build_stages(spec: ModelSpec, S: int) -> list[nn.Module]:
    """The ``S`` stages of ``spec``, with parameters drawn from ``spec.seed``."""
    gen_state = torch.random.get_rng_state()
    torch.manual_seed(spec.seed)
    try:
        if spec.name == "mlp":
            stages = [MLPStage(spec.width) for _ in range(S)]
        else:
            stages = [TransformerStage(spec.width, spec.heads) for _ in range(S)]
    finally:
        torch.random.set_rng_state(gen_state)
    return [mod.to(spec.torch_dtype) for mod in stages]


def microbatches(spec: ModelSpec, m: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """``m`` input and ``m`` target microbatches drawn from ``spec.seed + 1``."""
    g = torch.Generator().manual_seed(spec.seed + 1)
    shape = ((spec.microbatch_size, spec.width) if spec.name == "mlp"
             else (spec.microbatch_size, spec.seq, spec.width))
    inputs = [torch.randn(shape, generator=g, dtype=spec.torch_dtype) for _ in range(m)]
    targets = [torch.randn(shape, generator=g, dtype=spec.torch_dtype) for _ in range(m)]
    return inputs, targets


def loss_fn(output, target):
    """Mean squared error of one microbatch."""
    return torch.nn.functional.mse_loss(output, target)


def sequential_reference(stages, inputs, targets, loss=loss_fn):
    """Gradients of ``sum_j loss(stages(inputs[j]), targets[j])`` computed on one process, one
    microbatch after the other: ``(losses, [[grad of each parameter] per stage])``. The stages'
    ``.grad`` are reset first and left holding the result."""
    for mod in stages:
        mod.zero_grad(set_to_none=True)
    losses = []
    for x, t in zip(inputs, targets):
        for mod in stages:
            x = mod(x)
        value = loss(x, t)
        value.backward()
        losses.append(float(value.detach()))
    grads = [[p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p)
              for p in mod.parameters()] for mod in stages]
    return losses, grads
