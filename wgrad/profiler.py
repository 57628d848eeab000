"""``wgrad.profiler``: torch.profiler's names.

``record_function`` labels regions for JAX's profiler (``wgrad.autograd.profiler``); the
step ``schedule`` is torch's. wgrad has no op-level profiler of torch's kind (XLA runs
fused programs, not torch's ops), so ``profile`` and ``ExecutionTraceObserver`` raise
NotImplementedError when made, rather than return an empty profile: take a trace with
``jax.profiler.trace(log_dir)`` (TensorBoard or Perfetto), where the labels show.

Example
-------
>>> sched = wgrad.profiler.schedule(wait=1, warmup=1, active=1)
>>> [sched(i).name for i in range(3)]
['NONE', 'WARMUP', 'RECORD_AND_SAVE']
"""
import enum
import warnings

from . import cuda as _cuda
from .autograd.profiler import (DeviceType, ProfilerActivity, _no_profiler,  # noqa: F401
                                kineto_available, record_function)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available", "DeviceType",
           "record_function", "ExecutionTraceObserver"]


class ProfilerAction(enum.Enum):
    """What the profiler does at a step (torch's values)."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """torch's profiler schedule: a function of the step number giving the
    :class:`ProfilerAction` (skip ``skip_first`` steps, then cycles of ``wait`` idle,
    ``warmup`` and ``active`` recording steps, ``repeat`` times; 0: forever).

    Example
    -------
    >>> s = wgrad.profiler.schedule(wait=0, warmup=1, active=2, repeat=1)
    >>> [s(i).name for i in range(4)]
    ['WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    return schedule_fn


def supported_activities():
    """The activities torch's profiler would record here: the CPU, and CUDA where JAX
    sees a GPU (wgrad's ``profile`` records none of them: see the module).

    Example
    -------
    >>> wgrad.profiler.ProfilerActivity.CPU in wgrad.profiler.supported_activities()
    True
    """
    acts = {ProfilerActivity.CPU}
    if _cuda.is_available():
        acts.add(ProfilerActivity.CUDA)
    return acts


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """torch's ``on_trace_ready`` handler: made as torch's, but there is no torch profile
    to write (``profile`` raises); ``jax.profiler.trace(dir_name)`` writes a trace
    TensorBoard reads."""
    def handler_fn(prof):
        raise _no_profiler("wgrad.profiler.tensorboard_trace_handler")
    return handler_fn


class profile:
    """torch.profiler.profile: raises NotImplementedError when made (see the module);
    ``jax.profiler.trace(log_dir)`` records a trace of the same code."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None,
                 post_processing_timeout_s=None):
        raise _no_profiler("wgrad.profiler.profile")


class ExecutionTraceObserver:
    """torch's execution-trace observer: raises NotImplementedError when made."""

    def __init__(self, *args, **kwargs):
        raise _no_profiler("wgrad.profiler.ExecutionTraceObserver")
