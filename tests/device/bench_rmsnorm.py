#!/usr/bin/env python3
"""bench_rmsnorm.py: ktune's fused add + RMSNorm (op rmsnorm_add) against torch on the GPU.

Runs on the GPU machine (PyTorch with CUDA; Triton for torch.compile; no network):

    python3 tests/device/bench_rmsnorm.py [--lib out/lib/libktrt.so] [--db out/ktune.ktdb]
                                          [--dtype bf16,fp16] [--hidden 2048,...] [--rows 1,...]

Our kernel is launched through libktrt's ktrt_run (ctypes; the selection chain picks the kernel,
reported per row of the table). With --cubin DIR --kernels NAME[,NAME...] the named kernels are
launched straight from DIR/<NAME>.cubin through the CUDA driver instead (each its own column;
grid and block from the name's rb/th), for checking kernels before the runtime can serve them.

Competitors, all on the same inputs: torch eager running the explicit fp32 formula (as vLLM's
RMSNorm.forward_native: the sum in fp32, rounded for the residual, the variance of the fp32 sum,
normalized in fp32, rounded, times the weight) and torch.compile of the same function.

Correctness: each method's outputs from one call on fresh inputs against a float64 reference at
our kernel's rounding points (templates/abi/rmsnorm.h: the residual rounded, the variance of the
rounded residual, the normalized value rounded before the weight); ours must be within the
descriptor's bound (2^-8 bf16, 2^-10 fp16), the others are reported.

Timing: each method is captured in a CUDA graph of N launches and replayed between CUDA events;
rounds interleave the methods (their order rotated every round) and restore the inputs between
replays (outside the events: the op is in place); median, min and max over rounds of the time a
launch. Rows <= 64 run cache-cold: N launches over N buffer sets (x, residual, weight each) that
together exceed twice the 50 MB L2, so every launch reads from HBM; larger rows run hot on one
set. "ours again" is a second graph of our own launches: its ratio to ours is the noise floor.
Bandwidth: compulsory bytes (read x, residual, weight; write x, residual) over the median time, as
a percentage of a ceiling measured in the same run (x.copy_ of a 1 GiB tensor, read + write bytes).

Prints a table; with $OUT set, writes $OUT/bench_rmsnorm.tsv too. Exit status 1 if any of our
outputs failed its bound or any launch failed.
"""
import argparse
import ctypes
import importlib
import math
import os
import re
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import KtrtChoice, KtrtOptions, copy_ceiling_gbs  # noqa: E402

KT_OK = 0
L2_BYTES = 50 * 1024 * 1024
EPS = 1e-6
BOUND = {"bf16": 2.0 ** -8, "fp16": 2.0 ** -10}
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


class RmsnormAddArgs(ctypes.Structure):
    """templates/abi/rmsnorm.h: kt_rmsnorm_add_args"""
    _fields_ = [("x", ctypes.c_void_p), ("residual", ctypes.c_void_p), ("weight", ctypes.c_void_p),
                ("rows", ctypes.c_int), ("hidden", ctypes.c_int), ("x_stride", ctypes.c_int), ("eps", ctypes.c_float)]


def make_args(x, res, w, eps):
    return RmsnormAddArgs(x.data_ptr(), res.data_ptr(), w.data_ptr(), x.shape[0], x.shape[1], x.stride(0), eps)


class Ktrt:
    """libktrt through ctypes: ktrt_open once, ktrt_run per launch on torch's current stream."""

    def __init__(self, lib, db):
        self.lib = ctypes.CDLL(lib)
        self.lib.ktrt_open.argtypes = [ctypes.POINTER(KtrtOptions), ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.c_char_p, ctypes.c_size_t]
        self.lib.ktrt_open.restype = ctypes.c_int
        self.lib.ktrt_run.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p,
                                      ctypes.c_size_t, ctypes.c_void_p, ctypes.POINTER(KtrtChoice),
                                      ctypes.c_char_p, ctypes.c_size_t]
        self.lib.ktrt_run.restype = ctypes.c_int
        self.lib.ktrt_close.argtypes = [ctypes.c_void_p]
        opts = KtrtOptions(db.encode() if db else None, torch.cuda.current_device(), 1 if db else 0, 0, 0)
        self.rt = ctypes.c_void_p()
        self.err = ctypes.create_string_buffer(512)
        rc = self.lib.ktrt_open(ctypes.byref(opts), ctypes.byref(self.rt), self.err, len(self.err))
        if rc != KT_OK:
            raise RuntimeError("ktrt_open: rc %d: %s" % (rc, self.err.value.decode(errors="replace")))

    def run(self, dtype, args, choice=None):
        stream = torch.cuda.current_stream().cuda_stream
        rc = self.lib.ktrt_run(self.rt, b"rmsnorm_add", dtype.encode(), ctypes.byref(args), ctypes.sizeof(args),
                               ctypes.c_void_p(stream), ctypes.byref(choice) if choice is not None else None,
                               self.err, len(self.err))
        if rc != KT_OK:
            raise RuntimeError("ktrt_run: rc %d: %s" % (rc, self.err.value.decode(errors="replace")))


class Cubin:
    """One kernel from a cubin, launched through the CUDA driver on torch's current stream."""

    def __init__(self, path, name):
        m = re.search(r"_rb(\d+)_vw(\d+)_th(\d+)_un(\d+)$", name)
        if not m:
            raise ValueError("%s: not an rmsnorm_add kernel name (..._rbR_vwV_thT_unU)" % name)
        self.rb, self.th = int(m.group(1)), int(m.group(3))
        self.cuda = ctypes.CDLL("libcuda.so.1")
        torch.cuda.init()
        torch.empty(1, device="cuda")          # the primary context, current on this thread
        self.mod = ctypes.c_void_p()
        self.fn = ctypes.c_void_p()
        self._check(self.cuda.cuModuleLoad(ctypes.byref(self.mod), path.encode()), "cuModuleLoad " + path)
        self._check(self.cuda.cuModuleGetFunction(ctypes.byref(self.fn), self.mod, name.encode()),
                    "cuModuleGetFunction " + name)
        self.name = name

    @staticmethod
    def _check(rc, what):
        if rc != 0:
            raise RuntimeError("%s: CUresult %d" % (what, rc))

    def run(self, dtype, args, choice=None):
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(args), ctypes.c_void_p))
        grid = (args.rows + self.rb - 1) // self.rb
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        self._check(self.cuda.cuLaunchKernel(self.fn, ctypes.c_uint(grid), ctypes.c_uint(1), ctypes.c_uint(1),
                                             ctypes.c_uint(self.th), ctypes.c_uint(1), ctypes.c_uint(1),
                                             ctypes.c_uint(0), stream, params, None), "cuLaunchKernel " + self.name)
        if choice is not None:
            choice.path = b"direct"[:7]
            choice.kernel = self.name.encode()[:127]


def torch_formula(x, residual, weight, eps):
    """vLLM's native fused add + RMSNorm, in place like the kernel."""
    orig = x.dtype
    s = x.to(torch.float32) + residual.to(torch.float32)
    residual.copy_(s.to(orig))
    var = s.pow(2).mean(dim=-1, keepdim=True)
    n = (s * torch.rsqrt(var + eps)).to(orig)
    x.copy_(n * weight)


def reference64(x, residual, weight, eps):
    """float64 at the kernel's rounding points: (new x, new residual) as float64."""
    dt = x.dtype
    z = (x.double() + residual.double()).to(dt).double()
    s = 1.0 / torch.sqrt(z.pow(2).mean(dim=-1, keepdim=True) + eps)
    n = (z * s).to(torch.float32).to(dt).double()
    out = (n * weight.double()).to(torch.float32).to(dt).double()
    return out, z


def rel_error(got, ref):
    g = got.double()
    if not torch.isfinite(g).all():
        return float("nan")
    den = ref.norm().item()
    return (g - ref).norm().item() / (den if den > 0 else 1.0)


def random_like(shape, dtype, gen, weight=False):
    """uniform [-1, 1) (the weight: 1 +- 1/2), zeros replaced: zeros hide unwritten outputs"""
    t = torch.rand(shape, generator=gen, device="cuda", dtype=torch.float32) * 2 - 1
    if weight:
        t = 1 + 0.5 * t
    t = t.to(dtype)
    return torch.where(t == 0, torch.full_like(t, 0.5), t)


def bytes_moved(rows, hidden):
    return 2.0 * (4.0 * rows * hidden + hidden)


class Sets:
    """nsets buffer sets of one shape, with pristine copies to restore from (the op is in place)."""

    def __init__(self, rows, hidden, dtype, nsets, gen):
        self.x0 = random_like((nsets, rows, hidden), dtype, gen)
        self.r0 = random_like((nsets, rows, hidden), dtype, gen)
        self.w = random_like((nsets, hidden), dtype, gen, weight=True)
        self.x = self.x0.clone()
        self.r = self.r0.clone()
        self.n = nsets

    def restore(self):
        self.x.copy_(self.x0)
        self.r.copy_(self.r0)


def capture(fn, sets, launches):
    """A CUDA graph of `launches` calls of fn(x, residual, weight), over the sets in turn."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):          # warm-up outside the capture (module loads, compilation)
        for i in range(min(sets.n, 2)):
            fn(sets.x[i], sets.r[i], sets.w[i])
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, capture_error_mode="thread_local"):
        for i in range(launches):
            fn(sets.x[i % sets.n], sets.r[i % sets.n], sets.w[i % sets.n])
    torch.cuda.synchronize()
    return g


def time_graph(g, sets, launches, flush):
    sets.restore()
    if flush is not None:
        flush.zero_()                      # the restore's writes out of L2 before a cold replay
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    g.replay()
    e1.record()
    e1.synchronize()
    return e0.elapsed_time(e1) * 1e3 / launches      # microseconds a launch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default="out/lib/libktrt.so")
    ap.add_argument("--db", default=None, help="ktune database (default: libktrt's layers)")
    ap.add_argument("--cubin", default=None, help="directory of <kernel>.cubin: launch --kernels directly")
    ap.add_argument("--kernels", default="", help="with --cubin: comma-separated kernel names")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--hidden", default="2048,3584,4096,5120,8192")
    ap.add_argument("--rows", default="1,16,64,256,1024,4096,8192")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--hot-launches", type=int, default=20)
    ap.add_argument("--max-cold-sets", type=int, default=8192)
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    a = ap.parse_args()

    torch.manual_seed(0)
    dev = torch.cuda.get_device_name()
    ceiling = copy_ceiling_gbs()
    print("device %s; copy ceiling (read + write) %.0f GB/s" % (dev, ceiling))

    ours = []
    if a.cubin:
        for k in [k for k in a.kernels.split(",") if k]:
            ours.append((k, Cubin(os.path.join(a.cubin, k + ".cubin"), k)))
        if not ours:
            sys.exit("--cubin needs --kernels")
    else:
        ours.append(("ours", Ktrt(a.lib, a.db)))
    compiled = None
    if not a.no_compile:
        # (importlib: an `import torch._dynamo` here would make torch a local name of main)
        dynamo = importlib.import_module("torch._dynamo")
        # one specialization a shape (dynamic=False): keep every shape's, not just the default 8
        dynamo.config.cache_size_limit = 1024
        if hasattr(dynamo.config, "accumulated_cache_size_limit"):
            dynamo.config.accumulated_cache_size_limit = 4096
        compiled = torch.compile(torch_formula, dynamic=False, fullgraph=True)
    flush = torch.empty(2 * L2_BYTES, dtype=torch.uint8, device="cuda")

    rows_out = []
    failed = 0
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    for dname in a.dtype.split(","):
        dtype = DTYPES[dname]
        for hidden in [int(h) for h in a.hidden.split(",")]:
            for rows in [int(r) for r in a.rows.split(",")]:
                set_bytes = bytes_moved(rows, hidden) // 2 + 2 * hidden   # x, residual, weight
                cold = rows <= 64
                nsets = min(a.max_cold_sets, max(1, math.ceil(2 * L2_BYTES / set_bytes))) if cold else 1
                launches = nsets if cold else a.hot_launches
                sets = Sets(rows, hidden, dtype, nsets, gen)

                methods = []          # (label, fn(x, r, w))
                choices = {}
                for label, impl in ours:
                    def fn(x, r, w, impl=impl):
                        impl.run(dname, make_args(x, r, w, EPS))
                    methods.append((label, fn))
                    ch = KtrtChoice()
                    sets.restore()
                    impl.run(dname, make_args(sets.x[0], sets.r[0], sets.w[0], EPS), ch)
                    torch.cuda.synchronize()
                    choices[label] = "%s %s" % (ch.path.decode(errors="replace"), ch.kernel.decode(errors="replace"))
                methods.append(("eager", lambda x, r, w: torch_formula(x, r, w, EPS)))
                if compiled is not None:
                    methods.append(("compile", lambda x, r, w: compiled(x, r, w, EPS)))
                methods.append((ours[0][0] + " again", methods[0][1]))

                # correctness, one call each on fresh inputs
                errs = {}
                ref_x, ref_r = reference64(sets.x0[0], sets.r0[0], sets.w[0], EPS)
                for label, fn in methods[:-1]:
                    sets.restore()
                    try:
                        fn(sets.x[0], sets.r[0], sets.w[0])
                        torch.cuda.synchronize()
                        errs[label] = max(rel_error(sets.x[0], ref_x), rel_error(sets.r[0], ref_r))
                    except Exception as e:          # a launch that fails is a failed row, not a crash
                        print("  %s %s hidden=%d rows=%d: %s" % (label, dname, hidden, rows, e))
                        errs[label] = float("nan")
                for label, _ in ours:
                    if not (errs[label] <= BOUND[dname]):
                        failed += 1

                graphs = []
                for label, fn in methods:
                    if not math.isfinite(errs.get(label, 0.0)):
                        graphs.append((label, None))
                        continue
                    graphs.append((label, capture(fn, sets, launches)))
                times = {label: [] for label, _ in methods}
                for rnd in range(a.rounds):
                    k = rnd % len(graphs)
                    for label, g in graphs[k:] + graphs[:k]:
                        if g is not None:
                            times[label].append(time_graph(g, sets, launches, flush if cold else None))
                del graphs
                bm = bytes_moved(rows, hidden)
                for label, _ in methods:
                    t = times[label]
                    med = statistics.median(t) if t else float("nan")
                    row = {
                        "dtype": dname, "hidden": hidden, "rows": rows, "cache": "cold" if cold else "hot",
                        "sets": nsets, "method": label, "median_us": med, "min_us": min(t) if t else float("nan"),
                        "max_us": max(t) if t else float("nan"),
                        "gbs": bm / (med * 1e-6) / 1e9 if t else float("nan"),
                        "pct_ceiling": 100.0 * bm / (med * 1e-6) / 1e9 / ceiling if t else float("nan"),
                        "rel_err": errs.get(label, errs.get(ours[0][0])),
                        "kernel": choices.get(label, choices.get(label.replace(" again", ""), "")),
                    }
                    rows_out.append(row)
                base = rows_out[-len(methods)]["median_us"]
                print("%s hidden=%-5d rows=%-5d %s (%d sets)" % (dname, hidden, rows, "cold" if cold else "hot", nsets))
                for row in rows_out[-len(methods):]:
                    print("   %-44s %9.2f us [%8.2f, %8.2f]  %7.1f GB/s %5.1f%%  x%5.2f  err %.2e  %s" % (
                        row["method"], row["median_us"], row["min_us"], row["max_us"], row["gbs"],
                        row["pct_ceiling"], row["median_us"] / base if base > 0 else float("nan"),
                        row["rel_err"], row["kernel"]))
                del sets
                torch.cuda.empty_cache()

    out = os.environ.get("OUT")
    if out:
        cols = ["dtype", "hidden", "rows", "cache", "sets", "method", "median_us", "min_us", "max_us", "gbs",
                "pct_ceiling", "rel_err", "kernel"]
        with open(os.path.join(out, "bench_rmsnorm.tsv"), "w") as f:
            f.write("# device %s; copy ceiling %.1f GB/s\n" % (dev, ceiling))
            f.write("\t".join(cols) + "\n")
            for row in rows_out:
                f.write("\t".join(("%.4g" % row[c]) if isinstance(row[c], float) else str(row[c]) for c in cols) + "\n")
    print("%d of our outputs outside the bound" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
