"""A CPU stand-in for a GPU, off by default: :func:`fake_gpu` makes Triton's active driver and ``torch.cuda``
report a chosen target and capability, so that a kernel file that asks at import or launch time (the active
driver's ``get_current_target()``, ``utils.get_device_properties(...)``, ``torch.cuda.get_device_capability()``,
``torch.cuda.is_available()``, ...) runs unmodified under :func:`attnio.triton.count_traffic`.

Nothing runs on a GPU: the kernels still run in Triton's interpreter on CPU tensors; ``get_active_torch_device()``
answers ``cpu``, so tensors a launcher allocates through it are CPU tensors, and with ``torch_cuda`` so are the
tensors it allocates with ``device="cuda"``, ``.to("cuda")`` or ``.cuda()``, and ``is_cuda`` is true of CPU
tensors (``attnio.triton.hooks.cuda_on_cpu``). ``sm_count`` is what the driver's device properties and
``torch.cuda.get_device_properties(...).multi_processor_count`` report: a launcher that picks its kernel by the
SM count (a split-KV path, a persistent grid) takes the path of that GPU. What the stand-in reports is what
the caller chose; it changes only which branch of the user's code is taken (block sizes chosen per
architecture, for example), never what is counted for a given branch. Everything is restored on exit. The
replacement itself (Triton's driver, ``torch.cuda``) is ``attnio.triton.hooks.driver_replaced``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from attnio.core.errors import InvalidParameter, Unsupported


class FakeDriver:
    """The subset of Triton's driver interface that kernel files query; answers are the chosen device's."""

    def __init__(self, target: str, arch: int | str, warp_size: int, sm_count: int, smem_bytes: int,
                 name: str) -> None:
        from triton.backends.compiler import GPUTarget

        self.target = GPUTarget(target, arch, warp_size)
        self.properties = {
            "max_shared_mem": smem_bytes,
            "multiprocessor_count": sm_count,
            "max_num_regs": 65536,
            "warpSize": warp_size,
            "sm_clock_rate": 1_755_000,
            "mem_clock_rate": 2_619_000,
            "mem_bus_width": 5120,
        }
        self.name = name
        self.utils = SimpleNamespace(get_device_properties=lambda device=0: dict(self.properties))
        self.backend = target

    @classmethod
    def is_active(cls) -> bool:
        return True

    def get_current_target(self) -> Any:
        return self.target

    def get_active_torch_device(self) -> Any:
        import torch

        return torch.device("cpu")

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device: int) -> None:
        return None

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def get_device_interface(self) -> Any:
        import torch

        return torch.cuda

    def get_benchmarker(self) -> Any:
        def run_once(fn: Any, *args: Any, **kwargs: Any) -> float:
            fn()
            return 0.0

        return run_once

    def get_empty_cache_for_benchmark(self) -> Any:
        import torch

        return torch.empty(0)

    def clear_cache(self, cache: Any) -> None:
        return None

    def map_python_to_cpp_type(self, ty: str) -> str:
        raise Unsupported("attnio's fake GPU driver compiles nothing: kernels run in Triton's interpreter")


def _capability(target: str, arch: int | str, capability: tuple[int, int] | None) -> tuple[int, int]:
    if capability is not None:
        return capability
    if isinstance(arch, int):
        return divmod(arch, 10)
    raise InvalidParameter("capability", capability, f"a (major, minor) pair for arch {arch!r} of target {target!r}")


@contextlib.contextmanager
def fake_gpu(target: str = "cuda", arch: int | str = 90, *, warp_size: int | None = None, sm_count: int = 132,
             smem_bytes: int = 228 * 1024, capability: tuple[int, int] | None = None,
             name: str = "attnio CPU stand-in (NVIDIA H100-like)", torch_cuda: bool = True) -> Iterator[FakeDriver]:
    """Make Triton's active driver (and, with ``torch_cuda``, ``torch.cuda``) report ``target``/``arch`` for the
    ``with`` block; with ``torch_cuda``, CUDA allocations land on the CPU. Defaults: an H100-like sm_90 (132 SMs, 228 KiB shared memory). ``target="hip"`` with
    ``arch="gfx942"`` needs ``capability`` (e.g. (9, 4)); its warp size defaults to 64."""
    if target not in ("cuda", "hip"):
        raise InvalidParameter("target", target, "cuda or hip")
    from attnio.triton.hooks import cuda_on_cpu, driver_replaced

    fake = FakeDriver(target, arch, warp_size or (64 if target == "hip" else 32), sm_count, smem_bytes, name)
    fakes = None
    if torch_cuda:
        major, minor = _capability(target, arch, capability)
        props = SimpleNamespace(name=name, major=major, minor=minor, multi_processor_count=sm_count,
                                total_memory=80 * 2**30, warp_size=fake.target.warp_size,
                                shared_memory_per_block_optin=smem_bytes, gcnArchName=str(arch))
        fakes = {
            "is_available": lambda: True,
            "device_count": lambda: 1,
            "current_device": lambda: 0,
            "set_device": lambda device: None,
            "synchronize": lambda device=None: None,
            "get_device_capability": lambda device=None: (major, minor),
            "get_device_properties": lambda device=None: props,
            "get_device_name": lambda device=None: name,
            "device": _DeviceContext,
            "current_stream": lambda device=None: SimpleNamespace(cuda_stream=0, synchronize=lambda: None),
        }
    with driver_replaced(fake, fakes), (cuda_on_cpu() if torch_cuda else contextlib.nullcontext()):
        yield fake


class _DeviceContext(contextlib.nullcontext):
    """``torch.cuda.device(d)`` under the stand-in: selects nothing (there is one fake device)."""

    def __init__(self, device: Any = None) -> None:
        super().__init__()
