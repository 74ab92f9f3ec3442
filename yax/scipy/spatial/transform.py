"""`Rotation` and `Slerp`: rotations in 3-D, as `jax.scipy.spatial.transform` (SciPy's API).

A `Rotation` holds unit quaternions in SciPy's scalar-last order `(x, y, z, w)`: `quat` has
shape `(4,)` for one rotation or `(N, 4)` for N. It is a NamedTuple, so a pytree: it passes
through `jit`, `vmap` and `grad`. Every conversion works on the last axis of its input, so a
batch is one array program, not a Python loop.

    r = Rotation.from_euler("z", 90, degrees=True)
    r.apply(jnp.array([1.0, 0.0, 0.0]))         # ~[0, 1, 0]
    (r * r.inv()).magnitude()                   # 0
    Slerp.init(jnp.array([0.0, 1.0]), Rotation.from_rotvec(rv))(0.5)   # halfway

Euler angles follow SciPy: lowercase axes (`"xyz"`) are extrinsic (fixed frame), uppercase
(`"XYZ"`) intrinsic (rotating frame); `as_euler` uses the quaternion method of Bernardes and
Viollet (2022), as SciPy does.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from yax import numpy as jnp
from yax import random as _random

_AXIS = {"x": 0, "y": 1, "z": 2}
_SMALL_ANGLE = 1e-3  # below it the rotation-vector scales use their Taylor series


def _norm(v):
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _normalized(q):
    return q / _norm(q)[..., None]


def _compose(p, q):
    """The Hamilton product p*q of scalar-last quaternions (the rotation q, then p)."""
    pv, pw = p[..., :3], p[..., 3:]
    qv, qw = q[..., :3], q[..., 3:]
    vec = pw * qv + qw * pv + jnp.cross(pv, qv)
    w = pw * qw - jnp.sum(pv * qv, axis=-1, keepdims=True)
    return jnp.concatenate([vec, w], axis=-1)


def _elementary(axis: int, angle):
    """Quaternions of rotations by `angle` (any shape) about one coordinate axis."""
    half = angle / 2
    zero = jnp.zeros_like(half)
    parts = [zero, zero, zero, jnp.cos(half)]
    parts[axis] = jnp.sin(half)
    return jnp.stack(parts, axis=-1)


def _parse_seq(seq: str, lengths: tuple) -> tuple[list[int], bool]:
    """(axis indices, intrinsic) of an Euler sequence such as "xyz" or "ZXZ"."""
    if not isinstance(seq, str) or len(seq) not in lengths:
        want = "3" if lengths == (3,) else "1 to 3"
        raise ValueError(f"Expected {want} axes from ['x', 'y', 'z'] (extrinsic) or "
                         f"['X', 'Y', 'Z'] (intrinsic), got {seq!r}")
    intrinsic = re.fullmatch(r"[XYZ]+", seq) is not None
    if not intrinsic and re.fullmatch(r"[xyz]+", seq) is None:
        raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                         f"['X', 'Y', 'Z'] (not mixed), got {seq!r}")
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"Expected consecutive axes to be different, got {seq!r}")
    return [_AXIS[c] for c in seq.lower()], intrinsic


def _matrix_of(q):
    x, y, z, w = (q[..., i] for i in range(4))
    rows = [[w * w + x * x - y * y - z * z, 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), w * w - x * x + y * y - z * z, 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), w * w - x * x - y * y + z * z]]
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def _quat_of_matrix(m):
    """Shepperd's method: of the four ways to read the quaternion off the matrix, use the one
    with the largest pivot (a diagonal entry or the trace), which is the best conditioned."""
    diag = [m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]]
    trace = diag[0] + diag[1] + diag[2]
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        q = [None] * 4
        q[i] = 1 - trace + 2 * diag[i]
        q[j] = m[..., j, i] + m[..., i, j]
        q[k] = m[..., k, i] + m[..., i, k]
        q[3] = m[..., k, j] - m[..., j, k]
        candidates.append(jnp.stack(q, axis=-1))
    candidates.append(jnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                                 m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1))
    choice = jnp.argmax(jnp.stack(diag + [trace], axis=-1), axis=-1)
    stacked = jnp.stack(candidates, axis=-2)  # (..., 4 candidates, 4 components)
    picked = jnp.take_along_axis(stacked, choice[..., None, None], axis=-2)[..., 0, :]
    return _normalized(picked)


def _quat_of_rotvec(rotvec):
    a2 = jnp.sum(rotvec * rotvec, axis=-1)
    small = a2 <= _SMALL_ANGLE ** 2
    # near 0 the Taylor series in angle^2, so gradients stay finite at the identity; the
    # other branch takes a safe square root (the unused side of `where` is differentiated too)
    angle = jnp.sqrt(jnp.where(small, 1.0, a2))
    scale = jnp.where(small, 0.5 - a2 / 48 + a2 * a2 / 3840, jnp.sin(angle / 2) / angle)
    w = jnp.where(small, 1 - a2 / 8 + a2 * a2 / 384, jnp.cos(angle / 2))
    return jnp.concatenate([scale[..., None] * rotvec, w[..., None]], axis=-1)


def _rotvec_of(q, degrees: bool):
    q = jnp.where(q[..., 3:] < 0, -q, q)  # w >= 0, so the angle lies in [0, pi]
    v, w = q[..., :3], q[..., 3]
    n2 = jnp.sum(v * v, axis=-1)
    small = 2 * jnp.arctan2(jnp.sqrt(n2), w) <= _SMALL_ANGLE  # a test: no gradient flows
    angle = 2 * jnp.arctan2(jnp.sqrt(jnp.where(small, 1.0, n2)), w)
    a2 = 4 * n2 / (w * w)  # the angle squared, to the order the series needs
    scale = jnp.where(small, 2 + a2 / 12 + 7 * a2 * a2 / 2880, angle / jnp.sin(angle / 2))
    if degrees:
        scale = jnp.rad2deg(scale)
    return scale[..., None] * v


def _euler_of(q, axes: list[int], intrinsic: bool, degrees: bool):
    """Euler angles of quaternions `q` for the axis sequence (Bernardes and Viollet)."""
    if intrinsic:  # an intrinsic sequence is the extrinsic one of the reversed axes
        axes = axes[::-1]
    i, j, k = axes
    symmetric = i == k  # proper Euler angles ("zxz") rather than Tait-Bryan ("xyz")
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2  # +1 for an even permutation of (x, y, z)
    w, qi, qj, qk = q[..., 3], q[..., i], q[..., j], q[..., k] * sign
    if symmetric:
        a, b, c, d = w, qi, qj, qk
    else:
        a, b, c, d = w - qj, qi + qk, qj + w, qk - qi
    middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
    eps = 1e-7
    at_zero = jnp.abs(middle) <= eps
    at_pi = jnp.abs(middle - np.pi) <= eps
    locked = at_zero | at_pi
    # gimbal lock: the outer angle of the sequence as given is 0, the other one carries the
    # whole rotation about the shared axis
    lock_angle = jnp.where(at_zero, 2 * half_sum, 2 * half_diff * (1 if intrinsic else -1))
    outer_sign = 1 if symmetric else sign  # Tait-Bryan: the last angle of the extrinsic form
    if intrinsic:
        first = jnp.where(locked, lock_angle, half_sum + half_diff) * outer_sign
        third = jnp.where(locked, 0.0, half_sum - half_diff)
    else:
        first = jnp.where(locked, lock_angle, half_sum - half_diff)
        third = jnp.where(locked, 0.0, half_sum + half_diff) * outer_sign
    if not symmetric:
        middle = middle - np.pi / 2
    angles = jnp.stack([first, middle, third], axis=-1)
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return jnp.rad2deg(angles) if degrees else angles


def _canonical(q):
    """Each quaternion or its negation (the same rotation): the one whose first nonzero
    component, in the order w, x, y, z, is positive."""
    flip = q[..., 3] < 0
    undecided = q[..., 3] == 0
    for c in range(3):
        flip = flip | (undecided & (q[..., c] < 0))
        undecided = undecided & (q[..., c] == 0)
    return jnp.where(flip[..., None], -q, q)


class Rotation(NamedTuple):
    """Rotation(s) in 3-D, stored as unit quaternions `quat` (scalar last), as SciPy's
    `scipy.spatial.transform.Rotation`.

    Example:
      >>> r = Rotation.from_euler("z", 90, degrees=True)
      >>> r.as_rotvec()
      Array([0.       , 0.       , 1.5707964], dtype=float32)
    """

    quat: object

    # --- constructors ---------------------------------------------------------------------

    @classmethod
    def from_quat(cls, quat) -> Rotation:
        """From quaternions `(x, y, z, w)` (shape `(4,)` or `(N, 4)`), normalized."""
        return cls(_normalized(_float(quat)))

    @classmethod
    def from_matrix(cls, matrix) -> Rotation:
        """From rotation matrices (shape `(3, 3)` or `(N, 3, 3)`)."""
        return cls(_quat_of_matrix(_float(matrix)))

    @classmethod
    def from_rotvec(cls, rotvec, degrees: bool = False) -> Rotation:
        """From rotation vectors: the axis scaled by the angle (radians unless `degrees`)."""
        rotvec = _float(rotvec)
        return cls(_quat_of_rotvec(jnp.deg2rad(rotvec) if degrees else rotvec))

    @classmethod
    def from_mrp(cls, mrp) -> Rotation:
        """From Modified Rodrigues Parameters: the axis scaled by tan(angle / 4)."""
        mrp = _float(mrp)
        s = jnp.sum(mrp * mrp, axis=-1, keepdims=True)
        return cls(jnp.concatenate([2 * mrp, 1 - s], axis=-1) / (1 + s))

    @classmethod
    def from_euler(cls, seq: str, angles, degrees: bool = False) -> Rotation:
        """From Euler angles about the axes of `seq` (1 to 3 of "xyz": extrinsic, or of
        "XYZ": intrinsic); `angles` has shape `(len(seq),)` or `(N, len(seq))` (a 1-axis
        sequence also takes a scalar or `(N,)`)."""
        axes, intrinsic = _parse_seq(seq, (1, 2, 3))
        angles = jnp.atleast_1d(_float(angles))
        if len(axes) == 1 and angles.shape[-1] != 1:
            angles = angles[..., None]
        if angles.shape[-1] != len(axes):
            raise ValueError(f"Expected angles of shape (..., {len(axes)}) for seq {seq!r}, "
                             f"got {angles.shape}")
        if degrees:
            angles = jnp.deg2rad(angles)
        q = _elementary(axes[0], angles[..., 0])
        for n, axis in enumerate(axes[1:], start=1):
            step = _elementary(axis, angles[..., n])
            q = _compose(q, step) if intrinsic else _compose(step, q)
        return cls(q)

    @classmethod
    def identity(cls, num: int | None = None, dtype=float) -> Rotation:
        """The identity rotation (`num` of them, when given)."""
        quat = jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype)
        return cls(quat if num is None else jnp.tile(quat, (num, 1)))

    @classmethod
    def random(cls, random_key, num: int | None = None) -> Rotation:
        """Rotations drawn uniformly over SO(3) (normalized 4-D Gaussian samples, as SciPy)."""
        shape = (4,) if num is None else (num, 4)
        return cls.from_quat(_random.normal(random_key, shape))

    @classmethod
    def concatenate(cls, rotations) -> Rotation:
        """One Rotation holding every rotation of the sequence `rotations`, in order."""
        return cls(jnp.concatenate([jnp.atleast_2d(r.quat) for r in rotations]))

    # --- conversions ----------------------------------------------------------------------

    def as_quat(self, canonical: bool = False, scalar_first: bool = False):
        """The quaternions; `canonical` picks the sign with w >= 0, `scalar_first` gives
        `(w, x, y, z)`."""
        q = _canonical(self.quat) if canonical else self.quat
        return jnp.roll(q, 1, axis=-1) if scalar_first else q

    def as_matrix(self):
        return _matrix_of(self.quat)

    def as_rotvec(self, degrees: bool = False):
        return _rotvec_of(self.quat, degrees)

    def as_mrp(self):
        q = jnp.where(self.quat[..., 3:] < 0, -self.quat, self.quat)  # the shorter way round
        return q[..., :3] / (1 + q[..., 3:])

    def as_euler(self, seq: str, degrees: bool = False):
        """Euler angles for a 3-axis `seq` ("xyz", "ZXZ", ...): the middle angle in [0, pi]
        (proper) or [-pi/2, pi/2] (Tait-Bryan), the others in [-pi, pi)."""
        axes, intrinsic = _parse_seq(seq, (3,))
        return _euler_of(self.quat, axes, intrinsic, degrees)

    # --- operations -----------------------------------------------------------------------

    def apply(self, vectors, inverse: bool = False):
        """Rotate `vectors` (shape `(3,)` or `(N, 3)`, broadcast against the rotations)."""
        m = self.as_matrix()
        if inverse:
            m = jnp.swapaxes(m, -1, -2)
        return jnp.sum(m * _float(vectors)[..., None, :], axis=-1)

    def inv(self) -> Rotation:
        return Rotation(self.quat * jnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self):
        """The rotation angle(s), in [0, pi]."""
        return 2 * jnp.arctan2(_norm(self.quat[..., :3]), jnp.abs(self.quat[..., 3]))

    def mean(self, weights=None) -> Rotation:
        """The (weighted) mean rotation: the quaternion maximizing the weighted sum of squared
        dot products with these, i.e. the top eigenvector of sum_i w_i q_i q_i^T."""
        q = jnp.atleast_2d(self.quat)
        w = jnp.ones(q.shape[0], q.dtype) if weights is None else jnp.asarray(weights, q.dtype)
        if w.ndim != 1 or w.shape[0] != q.shape[0]:
            raise ValueError(f"Expected `weights` of shape ({q.shape[0]},) (one per rotation), "
                             f"got {w.shape}")
        k = (q * w[:, None]).T @ q
        return Rotation(jnp.linalg.eigh(k)[1][:, -1])

    def __mul__(self, other) -> Rotation:
        """The composition: `(p * q).apply(v) == p.apply(q.apply(v))`."""
        if not isinstance(other, Rotation):
            return NotImplemented
        return Rotation.from_quat(_compose(self.quat, other.quat))

    @property
    def single(self) -> bool:
        """Whether this holds one rotation (quat of shape `(4,)`)."""
        return self.quat.ndim == 1

    def __len__(self) -> int:
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __getitem__(self, index) -> Rotation:
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[index])


def _float(x):
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.result_type(float))


class Slerp(NamedTuple):
    """Spherical linear interpolation between key rotations at increasing times, as SciPy's
    `Slerp` (build it with `Slerp.init(times, rotations)`, then call it with times).

    Between key times t_i <= t <= t_{i+1}, the result is `r_i * exp(alpha * log(r_i^-1 *
    r_{i+1}))` with alpha = (t - t_i) / (t_{i+1} - t_i): constant angular velocity.
    """

    times: object
    timedelta: object
    rotations: Rotation
    rotvecs: object

    @classmethod
    def init(cls, times, rotations: Rotation) -> Slerp:
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) < 2:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1 or times.shape[0] != len(rotations):
            raise ValueError(f"Expected times of shape ({len(rotations)},) (one per rotation), "
                             f"got {times.shape}")
        starts = Rotation(rotations.quat[:-1])
        steps = (starts.inv() * Rotation(rotations.quat[1:])).as_rotvec()
        return cls(times=times, timedelta=jnp.diff(times), rotations=starts, rotvecs=steps)

    def __call__(self, times) -> Rotation:
        """The interpolated rotation(s) at `times` (a scalar or 1-D), within the key times."""
        t = jnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError(f"`times` must be at most 1-dimensional, got shape {t.shape}")
        scalar = t.ndim == 0
        t = jnp.atleast_1d(t)
        seg = jnp.maximum(jnp.searchsorted(self.times, t) - 1, 0)
        alpha = (t - self.times[seg]) / self.timedelta[seg]
        out = self.rotations[seg] * Rotation.from_rotvec(self.rotvecs[seg] * alpha[:, None])
        return out[0] if scalar else out


__all__ = ["Rotation", "Slerp"]
