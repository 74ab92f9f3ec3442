"""Resampling by separable kernels: each resized axis is a matrix product with an
(input size x output size) weight matrix whose column j holds the kernel evaluated at the
distances from output sample j (mapped back into input coordinates) to every input pixel.

With antialiasing, a downscaling kernel is stretched by 1/scale so that it averages all the
input pixels it covers; columns are normalised to sum to 1, and samples whose centre falls
outside the input get no weight. 'nearest' picks floor of the mapped sample centre instead.
"""

from __future__ import annotations

import enum

import numpy as np

import yax.numpy as jnp
from yax.numpy._promote import promote_arrays_inexact

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4

    @staticmethod
    def from_string(name: str) -> ResizeMethod:
        aliases = {"nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR",
                   "trilinear": "LINEAR", "triangle": "LINEAR", "lanczos3": "LANCZOS3",
                   "lanczos5": "LANCZOS5", "cubic": "CUBIC", "bicubic": "CUBIC",
                   "tricubic": "CUBIC"}
        if name.lower() not in aliases:
            raise ValueError(f"unknown resize method {name!r}; known: {', '.join(aliases)}")
        return ResizeMethod[aliases[name.lower()]]


def _method(method) -> ResizeMethod:
    return method if isinstance(method, ResizeMethod) else ResizeMethod.from_string(method)


def _triangle(x):
    return jnp.maximum(0.0, 1 - jnp.abs(x))


def _keys_cubic(x):
    """Keys' cubic convolution kernel with a = -0.5."""
    x = jnp.abs(x)
    near = ((1.5 * x - 2.5) * x) * x + 1
    far = ((-0.5 * x + 2.5) * x - 4) * x + 2
    return jnp.where(x <= 1, near, jnp.where(x < 2, far, 0.0))


def _lanczos(radius: float):
    def kernel(x):
        return jnp.where(jnp.abs(x) < radius, jnp.sinc(x) * jnp.sinc(x / radius), 0.0)
    return kernel


_KERNELS = {ResizeMethod.LINEAR: _triangle, ResizeMethod.CUBIC: _keys_cubic,
            ResizeMethod.LANCZOS3: _lanczos(3.0), ResizeMethod.LANCZOS5: _lanczos(5.0)}


def _weights(in_size: int, out_size: int, scale, translation, kernel, antialias: bool, dtype):
    """The (in_size, out_size) resampling matrix of one axis."""
    inv_scale = 1 / scale
    stretch = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    centres = (jnp.arange(out_size, dtype=dtype) + 0.5 - translation) * inv_scale - 0.5
    pixels = jnp.arange(in_size, dtype=dtype)
    w = kernel(jnp.abs(centres[None, :] - pixels[:, None]) / stretch)
    total = jnp.sum(w, axis=0, keepdims=True)
    usable = jnp.abs(total) > 1000 * float(np.finfo(np.float32).eps)
    w = jnp.where(usable, w / jnp.where(usable, total, 1.0), 0.0)
    inside = (centres >= -0.5) & (centres <= in_size - 0.5)
    return jnp.where(inside[None, :], w, 0.0)


def _apply_axis(x, weights, axis: int):
    moved = jnp.moveaxis(x, axis, -1)
    return jnp.moveaxis(jnp.matmul(moved, weights), -1, axis)


def _finish(out, dtype):
    if jnp.issubdtype(dtype, jnp.integer):
        info = jnp.iinfo(dtype)
        return jnp.clip(jnp.round(out), info.min, info.max).astype(dtype)
    return out.astype(dtype)


def scale_and_translate(image, shape, spatial_dims, scale, translation, method="linear",
                        antialias: bool = True, precision=None):
    """Resample `image` to `shape`: along each axis in `spatial_dims`, output sample j comes
    from input coordinate (j + 0.5 - translation) / scale - 0.5, by `method` ('linear',
    'cubic', 'lanczos3', 'lanczos5'; 'nearest' is not supported here, as in JAX).

    Args:
      image: the input. shape: the output shape (image.ndim entries; non-spatial axes unchanged).
      spatial_dims: the resampled axes. scale, translation: one entry per spatial axis
      (arrays, so they may be traced). antialias: stretch the kernel when downscaling.
    """
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        raise ValueError("scale_and_translate does not support method 'nearest'; use resize")
    shape = tuple(int(s) for s in shape)
    spatial_dims = tuple(int(d) % image.ndim for d in spatial_dims)
    (x,) = promote_arrays_inexact("scale_and_translate", image)
    scale = jnp.asarray(scale, x.dtype)
    translation = jnp.asarray(translation, x.dtype)
    for i, axis in enumerate(spatial_dims):
        w = _weights(x.shape[axis], shape[axis], scale[i], translation[i], _KERNELS[method],
                     antialias, x.dtype)
        x = _apply_axis(x, w, axis)
    return _finish(x, jnp.asarray(image).dtype)


def _resize_nearest(image, shape):
    x = jnp.asarray(image)
    for axis, (n_in, n_out) in enumerate(zip(x.shape, shape, strict=True)):
        if n_in == n_out:
            continue
        idx = np.floor((np.arange(n_out) + 0.5) * (n_in / n_out)).astype(np.int32)
        x = jnp.take(x, np.minimum(idx, n_in - 1), axis=axis)
    return x


def resize(image, shape, method, antialias: bool = True, precision=None):
    """Resize `image` to `shape` (image.ndim entries) with `method`: 'nearest', 'linear',
    'cubic', 'lanczos3' or 'lanczos5' (or a ResizeMethod). Axes whose size changes are
    resampled with scale out/in and no translation."""
    method = _method(method)
    shape = tuple(int(s) for s in shape)
    image = jnp.asarray(image)
    if len(shape) != image.ndim:
        raise ValueError(f"resize: shape {shape} must have {image.ndim} entries, one per axis")
    if method is ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    spatial = [i for i, (a, b) in enumerate(zip(image.shape, shape, strict=True)) if a != b]
    if not spatial:
        return image
    scale = [shape[i] / image.shape[i] for i in spatial]
    return scale_and_translate(image, shape, spatial, scale, [0.0] * len(spatial), method,
                               antialias, precision)
