"""Scaled dot-product attention (jax.nn.dot_product_attention's "xla" implementation).

    logits[b, n, t, s] = scale * sum_h q[b, t, n, h] k[b, s, n // G, h]   (+ bias)
    probs = softmax(where(mask, logits, -0.7 * finfo.max), axis=s)          (in float32)
    out[b, t, n, h] = sum_s probs[b, n, t, s] v[b, s, n // G, h]

with G = N / K query heads per key/value head (grouped-query attention when K < N). The heads
are kept grouped as (K, G) through both contractions rather than repeating the keys, so
grouped-query attention costs no copies. Masks combine by "and": the explicit boolean `mask`,
the causal (lower-triangular) mask, a local window, and per-example sequence lengths; query
positions past their length give zero outputs.
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax.core import dtypes
from yax.nn.functions import softmax

__all__ = ["dot_product_attention"]


def _as_4d(t):
    t = jnp.asarray(t)
    return jnp.expand_dims(t, tuple(range(4 - t.ndim))) if t.ndim < 4 else t


def _check(t, shape, dtype, name):
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"dot_product_attention: {name} must have rank {len(shape)}, got "
                         f"shape {t.shape}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"dot_product_attention: {name} must have dtype {dtype}, got "
                         f"{t.dtype}")
    if any(want not in (-1, got) for want, got in zip(shape, t.shape, strict=True)):
        raise ValueError(f"dot_product_attention: {name} must have shape {tuple(shape)} "
                         f"(-1: any), got {t.shape}")


def _grouped(t, k: int, g: int):
    """A (B, N or 1, T, S) bias or mask as (B, K or 1, G or 1, T, S)."""
    if t is None:
        return None
    tb, tn, tt, ts = t.shape
    if tn == 1:
        return t[:, :, None]
    if tn != k * g:
        raise ValueError(f"dot_product_attention: a bias or mask must have 1 or {k * g} heads "
                         f"on axis 1, got shape {t.shape}")
    return jnp.reshape(t, (tb, k, g, tt, ts))


def _combined_mask(mask, is_causal, q_lengths, kv_lengths, window, t: int, s: int):
    """The boolean mask of shape broadcastable to (B, K, G, T, S), or None for no masking."""
    parts = [] if mask is None else [mask]
    q_pos = jnp.arange(t)[:, None]
    k_pos = jnp.arange(s)[None, :]
    if is_causal:
        parts.append(q_pos >= k_pos)
    if window is not None:
        left, right = window
        parts.append((q_pos <= k_pos + left) & (q_pos >= k_pos - right))
    if q_lengths is not None:
        parts.append((jnp.arange(t)[None, :, None] < q_lengths[:, None, None])[:, None, None])
    if kv_lengths is not None:
        parts.append((jnp.arange(s)[None, None, :] < kv_lengths[:, None, None])[:, None, None])
    if not parts:
        return None
    combined = parts[0]
    for part in parts[1:]:
        combined = jnp.logical_and(combined, part)
    return combined


def _attention(query, key, value, bias, mask, is_causal, scale, q_lengths, kv_lengths, window):
    b, t, n, h = query.shape
    s, k = key.shape[1], key.shape[2]
    g = n // k
    logits_dtype = jnp.promote_types(query.dtype, np.float32)
    query = jnp.reshape(query, (b, t, k, g, h))
    logits = jnp.einsum("btkgh,bskh->bkgts", query, key, preferred_element_type=logits_dtype)
    logits = logits * jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, k, g)).astype(logits.dtype)
    keep = _combined_mask(_grouped(mask, k, g), is_causal, q_lengths, kv_lengths, window, t, s)
    if keep is not None:
        # A large finite negative (not -inf), so fully masked rows stay finite (uniform).
        big = min(float(dtypes.finfo(logits.dtype).max), float(np.finfo(np.float32).max))
        logits = jnp.where(keep, logits, jnp.asarray(-0.7 * big, dtype=logits.dtype))
    probs = softmax(logits.astype(np.float32), axis=-1).astype(key.dtype)
    encoded = jnp.einsum("bkgts,bskh->btkgh", probs, value)
    encoded = jnp.reshape(encoded, (b, t, n, h))
    if q_lengths is not None:
        valid = jnp.arange(t)[None, :] < q_lengths[:, None]
        encoded = encoded * valid[:, :, None, None].astype(encoded.dtype)
    return encoded


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None, key_value_seq_lengths=None,
                          local_window_size=None, implementation=None):
    """Scaled dot-product attention, softmax(q k^T * scale + bias, masked) v.

    Args:
      query: (B, T, N, H) or (T, N, H) queries.
      key, value: (B, S, K, H) or (S, K, H), with K dividing N (grouped-query attention).
      bias: optional logits bias broadcastable to (B, N, T, S) (rank <= 4, leading axes added).
      mask: optional boolean mask broadcastable to (B, N, T, S); False drops a logit.
      scale: logit scale (default 1 / sqrt(H)).
      is_causal: apply the causal mask (query t sees keys s <= t).
      query_seq_lengths, key_value_seq_lengths: optional int32 (B,) valid lengths.
      local_window_size: int or (left, right): query t sees keys in [t - left, t + right].
      implementation: None or 'xla' (the only one here); 'cudnn' raises.
    Returns:
      An array shaped like `query`.

    Example:
      >>> out = yax.nn.dot_product_attention(q, k, v, is_causal=True)  # doctest: +SKIP
    """
    if implementation not in (None, "xla"):
        raise NotImplementedError(
            f"dot_product_attention: implementation {implementation!r} is not available in "
            f"yax; use None or 'xla'.")
    out_shape = jnp.shape(query)
    query, key, value = _as_4d(query), _as_4d(key), _as_4d(value)
    bias = None if bias is None else _as_4d(bias)
    mask = None if mask is None else _as_4d(mask)
    b, s, k, h = key.shape
    _check(value, (b, s, k, h), key.dtype, "value")
    _check(query, (b, -1, -1, h), key.dtype, "query")
    _check(mask, (-1,) * 4, np.dtype(bool), "mask")
    q_lengths = None if query_seq_lengths is None else jnp.asarray(query_seq_lengths)
    kv_lengths = None if key_value_seq_lengths is None else jnp.asarray(key_value_seq_lengths)
    _check(q_lengths, (b,), np.dtype(np.int32), "query_seq_lengths")
    _check(kv_lengths, (b,), np.dtype(np.int32), "key_value_seq_lengths")
    if query.shape[2] % k:
        raise ValueError(f"dot_product_attention: the number of query heads must be a multiple "
                         f"of key/value heads, but got {query.shape[2]} vs {k}")
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    scale = 1.0 / np.sqrt(h) if scale is None else scale
    out = _attention(query, key, value, bias, mask, bool(is_causal), scale, q_lengths,
                     kv_lengths, local_window_size)
    return jnp.reshape(out, out_shape)
