"""bench_common.py: what the device benches share: libktrt's option and choice structs as ctypes
mirrors of runtime/ktrt.h, and the copy ceiling every bandwidth column is a percentage of."""
import ctypes


class KtrtOptions(ctypes.Structure):
    """runtime/ktrt.h: ktrt_options."""
    _fields_ = [("db_path", ctypes.c_char_p), ("device", ctypes.c_int), ("no_default_layers", ctypes.c_int),
                ("workspace_bytes", ctypes.c_size_t), ("max_streams", ctypes.c_int)]


class KtrtChoice(ctypes.Structure):
    """runtime/ktrt.h: ktrt_choice (kernel KT_KERNEL_NAME_MAX = 192, build/kernel_name.h)."""
    _fields_ = [("path", ctypes.c_char * 8), ("kernel", ctypes.c_char * 192), ("problem_key", ctypes.c_char * 128),
                ("reason", ctypes.c_char * 256), ("db_path", ctypes.c_char * 512), ("tuned_us", ctypes.c_double),
                ("splitk", ctypes.c_int)]


def read_ceiling_gbs(reps=10):
    """The read ceiling in GB/s: the best of reps full reductions (torch.sum) of a 1 GiB fp32 tensor,
    bytes read over the time (the one-element result is noise). What a kernel that only streams its
    inputs, as decode attention does, can reach on this card."""
    import torch
    a = torch.empty((1 << 30) // 4, dtype=torch.float32, device="cuda").fill_(1)
    torch.sum(a)
    best = float("inf")
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        torch.sum(a)
        e1.record()
        e1.synchronize()
        best = min(best, e0.elapsed_time(e1) * 1e-3)
    del a
    torch.cuda.empty_cache()
    return float(1 << 30) / best / 1e9


def copy_ceiling_gbs(reps=10):
    """The copy ceiling in GB/s: the best of reps copies of a 1 GiB tensor, read + write bytes."""
    import torch
    n = (1 << 30) // 2
    a = torch.empty(n, dtype=torch.float16, device="cuda").fill_(1)
    b = torch.empty_like(a)
    b.copy_(a)
    best = float("inf")
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        b.copy_(a)
        e1.record()
        e1.synchronize()
        best = min(best, e0.elapsed_time(e1) * 1e-3)
    del a, b
    torch.cuda.empty_cache()
    return 2.0 * (1 << 30) / best / 1e9
