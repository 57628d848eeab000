"""``DeviceMesh`` and ``init_device_mesh`` (torch.distributed.device_mesh's names) over a
JAX ``Mesh``.

# NOTE [Meshes propagate shardings]
# A DeviceMesh wraps a ``jax.sharding.Mesh`` whose axes are of type ``Auto``: eager ops and
# wgrad.compile'd steps on arrays sharded over it are ordinary jitted JAX computations, and
# XLA's sharding propagation (GSPMD) decides each result's layout and inserts the
# collectives (a gradient summed over a sharded batch becomes an all-reduce). A mesh made
# with JAX's ``Explicit`` axes (``jax.make_mesh``'s default) works too, with JAX's
# sharding-in-types rules: an op whose result layout is ambiguous (a matmul contracting a
# sharded dimension) raises JAX's ShardingTypeError there.
"""
import math

import jax
import numpy as np

__all__ = ["DeviceMesh", "init_device_mesh"]

_PLATFORMS = {"cpu": "cpu", "cuda": "gpu", "gpu": "gpu", "tpu": "tpu"}


def _platform(device_type):
    p = _PLATFORMS.get(str(device_type).split(":")[0])
    if p is None:
        raise RuntimeError(f"Expected one of cpu, cuda, gpu, tpu device type at start of "
                           f"device string: {device_type}")
    return p


def _dim_names(names, ndim):
    if names is None:
        return tuple(f"dim_{i}" for i in range(ndim))
    names = tuple(names)
    if len(names) != ndim:
        raise RuntimeError(f"mesh_dim_names should have same length as mesh_shape! Found "
                           f"{len(names)} instead of {ndim}.")
    if len(set(names)) != len(names):
        raise RuntimeError(f"Each mesh_dim_name must be unique. Found repeated mesh_dim_name "
                           f"in mesh_dim_names {names}")
    return names


class DeviceMesh:
    """An n-dimensional grid of devices, a ``jax.sharding.Mesh`` underneath (``jax_mesh``).

    ``mesh`` holds JAX device ids (``jax.devices()[i].id``: in one process, the device
    indices) or JAX devices, nested as the grid. NOTE [Meshes propagate shardings].

    Example
    -------
    >>> import wgrad
    >>> from wgrad.distributed import DeviceMesh
    >>> DeviceMesh("cpu", [0], mesh_dim_names=("dp",))
    DeviceMesh('cpu', [0], mesh_dim_names=('dp',))
    """

    def __init__(self, device_type, mesh, *, mesh_dim_names=None):
        platform = _platform(device_type)
        by_id = {d.id: d for d in jax.devices(platform)}
        grid = np.array(mesh, dtype=object)
        flat = [by_id[int(x)] if not isinstance(x, jax.Device) else x for x in grid.flat]
        devices = np.array(flat, dtype=object).reshape(grid.shape)
        self.device_type = str(device_type).split(":")[0]
        self.mesh_dim_names = _dim_names(mesh_dim_names, devices.ndim)
        self.jax_mesh = jax.sharding.Mesh(
            devices, self.mesh_dim_names,
            axis_types=(jax.sharding.AxisType.Auto,) * devices.ndim)

    @classmethod
    def from_jax(cls, mesh, device_type=None):
        """A DeviceMesh over an existing ``jax.sharding.Mesh`` (its axis names and types)."""
        self = cls.__new__(cls)
        d = mesh.devices.flat[0]
        self.device_type = device_type or {"gpu": "cuda"}.get(d.platform, d.platform)
        self.mesh_dim_names = tuple(mesh.axis_names)
        self.jax_mesh = mesh
        return self

    @property
    def mesh(self):
        """The device ids, as the grid (a numpy array; torch's is a tensor of ranks)."""
        return np.vectorize(lambda d: d.id, otypes=[int])(self.jax_mesh.devices)

    @property
    def ndim(self):
        return self.jax_mesh.devices.ndim

    @property
    def shape(self):
        return tuple(self.jax_mesh.devices.shape)

    def size(self, mesh_dim=None):
        """The number of devices (along ``mesh_dim``, an index or a name, when given)."""
        if mesh_dim is None:
            return self.jax_mesh.devices.size
        if isinstance(mesh_dim, str):
            mesh_dim = self.mesh_dim_names.index(mesh_dim)
        return self.shape[mesh_dim]

    def __repr__(self):
        names = "" if self.mesh_dim_names is None else \
            f", mesh_dim_names={self.mesh_dim_names}"
        return f"DeviceMesh('{self.device_type}', {self.mesh.tolist()}{names})"

    def __eq__(self, other):
        return isinstance(other, DeviceMesh) and self.jax_mesh == other.jax_mesh

    def __hash__(self):
        return hash(self.jax_mesh)


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None):
    """A DeviceMesh of shape ``mesh_shape`` over the JAX devices of ``device_type``.

    In torch the mesh covers the world's ranks; here it covers JAX's devices, which after
    ``init_process_group`` are those of every process. ``mesh_shape`` may cover fewer
    devices than there are (the first ones are used). On one host, ``XLA_FLAGS=
    --xla_force_host_platform_device_count=N`` (set before JAX starts) makes N CPU devices.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.distributed import init_device_mesh
    >>> mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))
    >>> mesh.size(), mesh.mesh_dim_names
    (1, ('dp',))
    """
    mesh_shape = tuple(int(s) for s in mesh_shape)
    devices = jax.devices(_platform(device_type))
    n = math.prod(mesh_shape)
    if n > len(devices):
        raise RuntimeError(f"init_device_mesh: mesh_shape {mesh_shape} needs {n} devices, but "
                           f"JAX sees {len(devices)} {device_type} device(s)")
    ids = np.array([d.id for d in devices[:n]]).reshape(mesh_shape)
    return DeviceMesh(device_type, ids, mesh_dim_names=mesh_dim_names)
