"""A small transformer training step (the 06 notebook's), and its FSDP × TP and FSDP-only specs."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

D, H, F, V, L, S = 512, 8, 2048, 8192, 2, 128


def shapes(batch: int) -> tuple[dict[str, Any], Any]:
    f32 = jnp.float32
    layer = {
        "qkv": jax.ShapeDtypeStruct((D, 3 * D), f32),
        "out": jax.ShapeDtypeStruct((D, D), f32),
        "up": jax.ShapeDtypeStruct((D, F), f32),
        "down": jax.ShapeDtypeStruct((F, D), f32),
    }
    params = {"embed": jax.ShapeDtypeStruct((V, D), f32), "layers": [dict(layer) for _ in range(L)]}
    return params, jax.ShapeDtypeStruct((batch, S), jnp.int32)


def specs(fsdp: str, tp: str | None) -> list[Any]:
    layer = {"qkv": P(fsdp, tp), "out": P(tp, fsdp), "up": P(fsdp, tp), "down": P(tp, fsdp)}
    return [{"embed": P(tp, fsdp), "layers": [dict(layer) for _ in range(L)]}, P(fsdp)]


def loss(params: Any, tokens: Any) -> Any:
    x = params["embed"][tokens]
    for p in params["layers"]:
        q, k, v = jnp.split(x @ p["qkv"], 3, axis=-1)
        b, s, _ = q.shape
        q, k, v = (t.reshape(b, s, H, D // H) for t in (q, k, v))
        a = jax.nn.softmax(jnp.einsum("bshd,bthd->bhst", q, k) / (D // H) ** 0.5, axis=-1)
        x = x + jnp.einsum("bhst,bthd->bshd", a, v).reshape(b, s, D) @ p["out"]
        x = x + jax.nn.gelu(x @ p["up"]) @ p["down"]
    logits = x @ params["embed"].T
    return -jnp.mean(jax.nn.log_softmax(logits)[..., 0])


def step(params: Any, tokens: Any) -> Any:
    value, grads = jax.value_and_grad(loss)(params, tokens)
    return value, jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads)
