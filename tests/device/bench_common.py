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


def _triton_reader():
    """A Triton kernel that only reads: each program sums BLOCK x ITERS fp32 elements, four
    loads of its row in flight, and writes one float. None when Triton is missing."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def read_kernel(x, out, n_per_prog, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        base = x + pid.to(tl.int64) * n_per_prog
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for i in range(0, n_per_prog, 4 * BLOCK):
            offs = i + tl.arange(0, BLOCK)
            a = tl.load(base + offs)
            b = tl.load(base + offs + BLOCK)
            c = tl.load(base + offs + 2 * BLOCK)
            d = tl.load(base + offs + 3 * BLOCK)
            acc += (a + b) + (c + d)
        tl.store(out + pid, tl.sum(acc, axis=0))

    return read_kernel


def read_ceiling_gbs(reps=10):
    """The read ceiling in GB/s: bytes over the best of reps reads of a 1 GiB fp32 tensor by a
    kernel that does nothing else (Triton's, the best of a few grid sizes; torch.sum where Triton
    is missing, which reads slower: 3.9 of the H200's ~4.6 TB/s). What a kernel that only streams
    its inputs, as decode attention does, can reach on this card."""
    import torch
    n = (1 << 30) // 4
    a = torch.empty(n, dtype=torch.float32, device="cuda").fill_(1)
    kern = _triton_reader()
    runs = []
    if kern is not None:
        block = 1024
        for progs in (1056, 2112, 4224):   # 8, 16, 32 programs an SM on 132 SMs
            per = (n // progs) // (4 * block) * (4 * block)
            out = torch.empty(progs, dtype=torch.float32, device="cuda")
            runs.append((per * progs * 4,
                         lambda per=per, progs=progs, out=out: kern[(progs,)](a, out, per, BLOCK=block, num_warps=8)))
    else:
        runs.append((n * 4, lambda: torch.sum(a)))
    best_gbs = 0.0
    for nbytes, fn in runs:
        fn()
        for _ in range(reps):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            fn()
            e1.record()
            e1.synchronize()
            best_gbs = max(best_gbs, nbytes / (e0.elapsed_time(e1) * 1e-3) / 1e9)
    del a
    torch.cuda.empty_cache()
    return best_gbs


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


def kernel_times(fn, reps=5):
    """Each kernel fn launches (libktrt's included: CUPTI sees every launch on the context), as
    (name, launches a call, mean device microseconds a launch), in first-launch order, from
    torch.profiler over reps eager calls after one warm-up call."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    seen = {}
    for ev in prof.events():
        if ev.device_type != torch.autograd.DeviceType.CUDA:
            continue
        name = ev.name
        n, total = seen.get(name, (0, 0.0))
        seen[name] = (n + 1, total + ev.time_range.elapsed_us())
    return [(name, n / reps, total / n) for name, (n, total) in seen.items() if "Memcpy" not in name]


def print_kernel_times(label, fn, stream, reps=5):
    """One line a kernel of kernel_times(fn on stream): the row's label, the kernel's name, us a
    launch."""
    import torch

    def on_stream():
        with torch.cuda.stream(stream):
            fn()
    try:
        rows = kernel_times(on_stream, reps)
    except Exception as e:                      # a profiler that cannot start must not cost the bench's rows
        print("  %s kernels: profiler unavailable (%s)" % (label, e), flush=True)
        return
    for name, per_call, us in rows:
        print("  %s kernel %-60s x%-4g %9.2f us" % (label, name[:60], per_call, us), flush=True)
