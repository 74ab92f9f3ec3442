"""Neural-network layers as (init_fun, apply_fun) pairs (the API of
jax.example_libraries.stax).

    init_fun(rng, input_shape) -> (output_shape, params)
    apply_fun(params, inputs, **kwargs) -> outputs          (kwargs: rng for Dropout)

Layers are combined with `serial` (composition), `parallel` (side by side over a list of
inputs), `FanOut`/`FanInSum`/`FanInConcat` and `shape_dependent`. Parameters are tuples (a
layer's own) and lists (a `serial` stack), the same pytrees and initial values for the same key
as jax's stax, so a model written for jax trains unchanged with `import yax as jax`.

    init, apply = stax.serial(stax.Dense(128), stax.Relu, stax.Dense(10), stax.LogSoftmax)
    out_shape, params = init(yax.random.key(0), (-1, 784))
"""

from __future__ import annotations

import functools
import operator

import yax.numpy as jnp
from yax import lax, random
from yax.nn import functions as nn_functions
from yax.nn import initializers
from yax.nn.activations import selu

__all__ = [
    "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout",
    "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv",
    "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu",
    "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh", "elementwise", "elu", "gelu", "glorot",
    "glorot_normal", "leaky_relu", "log_softmax", "logsoftmax", "normal", "ones", "parallel",
    "randn", "relu", "selu", "serial", "shape_dependent", "sigmoid", "softmax", "softplus",
    "standardize", "zeros",
]

relu, elu, gelu, leaky_relu = (nn_functions.relu, nn_functions.elu, nn_functions.gelu,
                               nn_functions.leaky_relu)
sigmoid, softplus, softmax = nn_functions.sigmoid, nn_functions.softplus, nn_functions.softmax
log_softmax, standardize = nn_functions.log_softmax, nn_functions.standardize
glorot_normal, normal = initializers.glorot_normal, initializers.normal
ones, zeros = initializers.ones, initializers.zeros
# Older names kept by jax's stax.
glorot, randn, logsoftmax = glorot_normal, normal, log_softmax


def Dense(out_dim, W_init=None, b_init=None):  # noqa: N802,N803
    """A fully connected layer: inputs @ W + b, W (in, out) and b (out,)."""
    W_init = W_init or glorot_normal()  # noqa: N806
    b_init = b_init or normal()

    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params  # noqa: N806
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _conv_out_dim(size: int, window: int, stride: int, pad) -> int:
    if pad == "VALID":
        return -(-(size - window + 1) // stride)
    if pad in ("SAME", "SAME_LOWER"):
        return -(-size // stride)
    lo, hi = pad
    return (size + lo + hi - window) // stride + 1


def _conv_output_shape(lhs_shape, rhs_shape, strides, padding, dimension_numbers):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    spatial = [c for c in out_spec if c not in "NC"]
    pads = [padding] * len(spatial) if isinstance(padding, str) else list(padding)
    sizes = {"N": lhs_shape[lhs_spec.index("N")], "C": rhs_shape[rhs_spec.index("O")]}
    rhs_spatial = [c for c in rhs_spec if c not in "IO"]
    lhs_spatial = [c for c in lhs_spec if c not in "NC"]
    for i, c in enumerate(spatial):
        sizes[c] = _conv_out_dim(lhs_shape[lhs_spec.index(lhs_spatial[i])],
                                 rhs_shape[rhs_spec.index(rhs_spatial[i])], strides[i], pads[i])
    return tuple(sizes[c] for c in out_spec)


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",  # noqa: N802
                W_init=None, b_init=None):  # noqa: N803
    """A convolution with the given (lhs, rhs, out) layout strings, e.g.
    ('NHWC', 'HWIO', 'NHWC'); the bias has size out_chan on the out layout's 'C' axis."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))  # noqa: N806
    b_init = b_init or normal(1e-6)

    def init_fun(rng, input_shape):
        filters = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
                        else next(filters) for c in rhs_spec]
        output_shape = _conv_output_shape(input_shape, kernel_shape, strides, padding,
                                          dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params  # noqa: N806
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers) + b

    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv.__doc__ = "A 2-D convolution layer on NHWC inputs with HWIO kernels (`GeneralConv`)."


def _conv_transpose_fns():
    conv_transpose = getattr(lax, "conv_transpose", None)
    shape_tuple = getattr(lax, "conv_transpose_shape_tuple", None)
    if conv_transpose is None or shape_tuple is None:
        raise NotImplementedError(
            "stax.GeneralConvTranspose needs yax.lax.conv_transpose, which this build of yax "
            "does not have yet.")
    return conv_transpose, shape_tuple


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,  # noqa: N802
                         padding="VALID", W_init=None, b_init=None):  # noqa: N803
    """A transposed convolution (`lax.conv_transpose`) with the given layout strings."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))  # noqa: N806
    b_init = b_init or normal(1e-6)

    def init_fun(rng, input_shape):
        _, shape_tuple = _conv_transpose_fns()
        filters = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
                        else next(filters) for c in rhs_spec]
        output_shape = shape_tuple(input_shape, kernel_shape, strides, padding,
                                   dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return tuple(output_shape), (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        conv_transpose, _ = _conv_transpose_fns()
        W, b = params  # noqa: N806
        return conv_transpose(inputs, W, strides, padding,
                              dimension_numbers=dimension_numbers) + b

    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
Conv1DTranspose.__doc__ = "A 1-D transposed convolution layer on NHC inputs (HIO kernels)."
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
ConvTranspose.__doc__ = "A 2-D transposed convolution layer on NHWC inputs (HWIO kernels)."


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True,  # noqa: N802
              beta_init=zeros, gamma_init=ones):
    """Batch normalisation over `axis` (batch statistics of the current inputs; no running
    averages, as in jax's stax), with a learned shift beta and scale gamma."""
    axis = (axis,) if isinstance(axis, int) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[expand] * z + beta[expand]
        if center:
            return z + beta[expand]
        if scale:
            return gamma[expand] * z
        return z

    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying `fun(inputs, **fun_kwargs)`."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _non_spatial_axes(spec, ndim: int) -> tuple:
    return (0, ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):  # noqa: N802
        """A pooling layer over the spatial axes (all but N and C; by default the first and
        last axes are N and C)."""
        window_shape = tuple(window_shape)
        strides = tuple(strides or (1,) * len(window_shape))
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        full_window, full_strides = window_shape, strides
        for i in sorted(_non_spatial_axes(spec, len(window_shape) + 2)):
            full_window = full_window[:i] + (1,) + full_window[i:]
            full_strides = full_strides[:i] + (1,) + full_strides[i:]

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, full_window, full_strides, padding) \
                if isinstance(padding, str) else padding
            return lax.reduce_window_shape_tuple(input_shape, full_window, full_strides,
                                                 pads), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, full_window, full_strides,
                                    padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun
    return PoolingLayer


def _normalize_by_window_size(dims, strides, padding):
    def rescale(outputs, inputs, spec):
        non_spatial = _non_spatial_axes(spec, inputs.ndim)
        spatial_shape = tuple(d for i, d in enumerate(inputs.shape) if i not in non_spatial)
        window_sizes = lax.reduce_window(jnp.ones(spatial_shape, dtype=inputs.dtype), 0.,
                                         lax.add, dims, strides, padding)
        for i in sorted(non_spatial):
            window_sizes = jnp.expand_dims(window_sizes, i)
        return outputs / window_sizes
    return rescale


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.)
AvgPool = _pooling_layer(lax.add, 0., _normalize_by_window_size)


def _flatten():
    def init_fun(rng, input_shape):
        return (input_shape[0], functools.reduce(operator.mul, input_shape[1:], 1)), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()
Identity = elementwise(lambda x: x)


def FanOut(num):  # noqa: N802
    """Copy the input `num` times (a list of inputs for `parallel`)."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)

    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):  # noqa: N802
    """Concatenate a list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        return tuple(input_shape[0][:ax]) + (size,) + tuple(input_shape[0][ax + 1:]), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate, mode="train"):  # noqa: N802
    """Dropout keeping each input with probability `rate` (scaled by 1 / rate, as in jax's
    stax, where `rate` is the keep probability); `apply_fun` needs `rng=` in 'train' mode."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That "
                "is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng)` where `rng` is a PRNG key (e.g. from "
                "`yax.random.key`).")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun


def serial(*layers):
    """Compose layers in sequence; params are a list with one entry per layer."""
    n_layers = len(layers)
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, n_layers) if rng is not None else (None,) * n_layers
        for fun, param, layer_rng in zip(apply_funs, params, rngs, strict=True):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """Apply layers side by side to a sequence of inputs (one per layer)."""
    n_layers = len(layers)
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, n_layers)
        results = [init(r, shape) for init, r, shape in
                   zip(init_funs, rngs, input_shape, strict=True)]
        return tuple(r[0] for r in results), tuple(r[1] for r in results)

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, n_layers) if rng is not None else (None,) * n_layers
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in
                zip(apply_funs, params, inputs, rngs, strict=True)]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built from the input shape: `make_layer(input_shape) -> (init_fun, apply_fun)`."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun

