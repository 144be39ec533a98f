#!/usr/bin/env python3
"""bench_attn.py: ktune's paged decode attention (op attn_decode) through libktrt against torch SDPA.

Runs on the GPU machine (PyTorch with CUDA; no flash-attn or vLLM needed):

    python3 tests/device/bench_attn.py [--lib out/lib/libktrt.so] [--db out/ktune.ktdb]
        [--dtype bf16,fp16,bf16_e4m3,fp16_e4m3] [--d 128] [--g 8] [--hkv 2] [--q 1,4]
        [--batch 1,8,32,128] [--ctx 1024,4096,16384] [--bs 16] [--window 0] [--softcap 0]
        [--sinks 0] [--lens mixed|equal] [--rounds 15] [--check-only [--replay-lengths]]
    python3 tests/device/bench_attn.py --self-test      # CPU only: the float64 reference, the ABI struct

Every list option is comma-separated; rows are the cross product.

Inputs: vLLM's NHD paged cache, k_cache and v_cache [num_blocks][block_size][num_kv_heads][head_size]
(bf16/fp16, or fp8 e4m3fn holding round(k / k_scale) with per-tensor k_scale, v_scale), a block
table whose entries are a random permutation of the physical blocks, mixed sequence lengths in one
batch (the first sequence has --ctx keys, the others uniform in [ctx/2, ctx]; --lens equal: all ctx),
q query rows per sequence (decode q=1, speculative verify q=2..8, causal bottom-right aligned),
q and out [num_tokens][num_heads][head_size]. Our kernel is launched through libktrt's ktrt_run with
templates/abi/attn.h's kt_attn_args (mirrored below as a ctypes Structure whose size and field names
are checked against the header); ktrt_choose names the kernel and path that serve each row.

Correctness: out poisoned with NaN, one launch, against a float64 reference computed in torch on the
GPU (each sequence's K/V gathered through the block table, fp8 dequantized with the scales, causal,
sliding window, softcap, sinks as the ABI states); ||out - ref|| / ||ref|| must be within 2^-6 (bf16
q) / 2^-8 (fp16 q), checked on the first and the last timing set, and again after the timed replays.

Peers, timed in the same run on the same data: torch SDPA with the cuDNN backend and with the flash
backend. SDPA has no paged or varlen-KV entry, so the peers read contiguous, unpaged KV
[batch][kv_heads][Lmax][head_size] gathered (outside timing) from the same cache through the same
block tables, every sequence padded to the batch's LONGEST length Lmax (with a window: the last
window + q - 1 keys, all a row can see), no mask, non-causal for q > 1 (SDPA's is_causal is top-left
aligned when q != kv length; a bottom-right mask covers < q of Lmax keys), no softcap or sinks, GQA
through enable_gqa=True (else K/V repeated to every query head outside timing, said in the row);
fp8 rows: the peers read the 16-bit dequantized KV. So with --lens mixed the peers move more bytes
than we do (the padding); --lens equal gives both the same keys. Peers are timed, not checked.

Timing (METHOD.md): each method is a CUDA graph of N launches over rotating sets, replayed between
CUDA events after an L2 flush; rounds interleave the methods in rotated order; median, min, max of
the time a launch. Cache-cold: the sets use distinct physical blocks of one large cache (distinct
contiguous KV for the peers), enough of them that their KV exceeds twice the 50 MB L2, as decode
reads KV from HBM when serving. "ours again" is a second graph of our launches: its ratio to ours
is the noise floor. Bytes moved: K and V keys some row can see (window-limited) + q + out + block
table + seq_lens + query_start_loc, over the median time, as GB/s and as a percentage of a read
ceiling (a full reduction reading 1 GiB; the copy ceiling is printed beside it) measured in the same run.

Prints a table; with $OUT set, writes $OUT/<--tsv> (default bench_attn.tsv) too. Exit status 1 on any of our outputs
outside the bound, a refused problem, or a failed launch.
"""
import argparse
import ctypes
import math
import os
import re
import statistics
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import KtrtChoice, KtrtOptions, copy_ceiling_gbs, read_ceiling_gbs  # noqa: E402

KT_OK = 0
L2_BYTES = 50 * 1024 * 1024
BOUND = {"bf16": 2.0 ** -6, "fp16": 2.0 ** -8}
QTYPE = {"bf16": "bf16", "fp16": "fp16", "bf16_e4m3": "bf16", "fp16_e4m3": "fp16"}
TORCH_T = {"bf16": torch.bfloat16, "fp16": torch.float16}
FP8_MAX = 448.0                    # OCP e4m3fn (sm_90)
K_SCALE, V_SCALE = 0.0175, 0.02    # fp8 caches: N(0,1) values, |x|/scale <= 448 up to 7.8 sigma
Q_STD = 2.0                        # scores scale*q.k of std ~2: peaked softmax, the score path matters


_P, _LL, _I, _F = ctypes.c_void_p, ctypes.c_longlong, ctypes.c_int, ctypes.c_float


class AttnArgs(ctypes.Structure):
    """templates/abi/attn.h: kt_attn_args, field for field.

    Size by hand (LP64: pointers and long long 8 bytes, aligned 8; int and float 4):
      8 pointers q .. sinks                                   0 .. 64
      q_stride_tok, o_stride_tok (long long)                 64 .. 80
      q_stride_head, o_stride_head (int)                     80 .. 88
      k_stride_block, v_stride_block (long long)             88 .. 104
      k/v_stride_slot, k/v_stride_head, bt_stride (5 int)   104 .. 124
      num_seqs, num_tokens, num_heads, num_kv_heads,
      head_size, block_size, max_query_len, max_seq_len,
      window (9 int)                                        124 .. 160
      scale, softcap, k_scale, v_scale (4 float)            160 .. 176
      num_segments (int), 4 bytes of padding                176 .. 184
      partials (pointer, 8-aligned)                         184 .. 192   -> sizeof 192, no tail padding
    """
    _fields_ = [
        ("q", _P), ("out", _P), ("k_cache", _P), ("v_cache", _P), ("block_table", _P), ("seq_lens", _P),
        ("query_start_loc", _P), ("sinks", _P),
        ("q_stride_tok", _LL), ("o_stride_tok", _LL), ("q_stride_head", _I), ("o_stride_head", _I),
        ("k_stride_block", _LL), ("v_stride_block", _LL), ("k_stride_slot", _I), ("v_stride_slot", _I),
        ("k_stride_head", _I), ("v_stride_head", _I), ("bt_stride", _I),
        ("num_seqs", _I), ("num_tokens", _I),
        ("num_heads", _I), ("num_kv_heads", _I), ("head_size", _I), ("block_size", _I),
        ("max_query_len", _I), ("max_seq_len", _I), ("window", _I),
        ("scale", _F), ("softcap", _F), ("k_scale", _F), ("v_scale", _F),
        # set by the runtime's bind, not by the caller (left 0 / NULL here)
        ("num_segments", _I), ("partials", _P),
    ]


ATTN_ARGS_SIZE = 192
assert ctypes.sizeof(AttnArgs) == ATTN_ARGS_SIZE, ctypes.sizeof(AttnArgs)


def header_fields(path, struct="kt_attn_args"):
    """The field names of a typedef'd struct of an ABI header, in order (None if the file is absent)."""
    try:
        text = open(path).read()
    except OSError:
        return None
    m = re.search(r"typedef\s+struct\s+%s\s*\{(.*?)\}\s*%s\s*;" % (struct, struct), text, re.S)
    if not m:
        raise RuntimeError("%s: no typedef struct %s" % (path, struct))
    body = re.sub(r"/\*.*?\*/", " ", m.group(1), flags=re.S)
    body = re.sub(r"//[^\n]*", " ", body)
    names = []
    for decl in body.split(";"):
        decl = decl.strip()
        if not decl:
            continue
        parts = decl.split(",")
        first = re.match(r"^(.*?)([A-Za-z_]\w*)\s*(\[[^\]]*\])?$", parts[0].strip())
        names.append(first.group(2))
        for p in parts[1:]:
            names.append(re.match(r"^[\s*]*([A-Za-z_]\w*)", p).group(1))
    return names


def check_header():
    hdr = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "templates", "abi", "attn.h")
    names = header_fields(hdr)
    if names is None:
        print("note: %s not found; the struct is unchecked against it" % hdr)
        return
    mine = [f[0] for f in AttnArgs._fields_]
    if names != mine:
        raise SystemExit("AttnArgs does not mirror templates/abi/attn.h:\n  header %s\n  here   %s" % (names, mine))


class Ktrt:
    """libktrt through ctypes: ktrt_open once, ktrt_choose / ktrt_run per problem on torch's current stream."""

    def __init__(self, lib, db, workspace_bytes=0, max_streams=0):
        self.lib = ctypes.CDLL(lib)
        L = self.lib
        L.ktrt_open.argtypes = [ctypes.POINTER(KtrtOptions), ctypes.POINTER(ctypes.c_void_p),
                                ctypes.c_char_p, ctypes.c_size_t]
        L.ktrt_open.restype = ctypes.c_int
        L.ktrt_run.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t,
                               ctypes.c_void_p, ctypes.POINTER(KtrtChoice), ctypes.c_char_p, ctypes.c_size_t]
        L.ktrt_run.restype = ctypes.c_int
        L.ktrt_choose.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t,
                                  ctypes.POINTER(KtrtChoice), ctypes.c_char_p, ctypes.c_size_t]
        L.ktrt_choose.restype = ctypes.c_int
        L.ktrt_close.argtypes = [ctypes.c_void_p]
        opts = KtrtOptions(db.encode() if db else None, torch.cuda.current_device(), 1 if db else 0,
                           workspace_bytes, max_streams)
        self.rt = ctypes.c_void_p()
        self.err = ctypes.create_string_buffer(512)
        rc = L.ktrt_open(ctypes.byref(opts), ctypes.byref(self.rt), self.err, len(self.err))
        if rc != KT_OK:
            raise RuntimeError("ktrt_open: rc %d: %s" % (rc, self.err.value.decode(errors="replace")))

    def choose(self, dtype, args, op="attn_decode"):
        ch = KtrtChoice()
        rc = self.lib.ktrt_choose(self.rt, op.encode(), dtype.encode(), ctypes.byref(args), ctypes.sizeof(args),
                                  ctypes.byref(ch), self.err, len(self.err))
        return rc, ch, self.err.value.decode(errors="replace")

    def run(self, dtype, args, choice=None, op="attn_decode"):
        stream = torch.cuda.current_stream().cuda_stream
        rc = self.lib.ktrt_run(self.rt, op.encode(), dtype.encode(), ctypes.byref(args), ctypes.sizeof(args),
                               ctypes.c_void_p(stream), ctypes.byref(choice) if choice is not None else None,
                               self.err, len(self.err))
        if rc != KT_OK:
            raise RuntimeError("ktrt_run: rc %d: %s" % (rc, self.err.value.decode(errors="replace")))


# ---------------------------------------------------------------------------------------------
# the problem: lengths, block tables, caches


def seq_lengths(batch, ctx, q, mode, gen):
    """the first sequence ctx keys, the others uniform in [ctx/2, ctx] (mode "equal": all ctx); >= q."""
    lo = max(q, (ctx + 1) // 2)
    if mode == "equal" or batch == 1 or lo >= ctx:
        lens = [ctx] * batch
    else:
        lens = [ctx] + torch.randint(lo, ctx + 1, (batch - 1,), generator=gen).tolist()
    return [max(L, q) for L in lens]


def visible_keys(L, qlen, window):
    """keys of a sequence that some of its query rows can see (the kernel's compulsory K/V reads)"""
    return min(L, window + qlen - 1) if window > 0 else L


class Problem:
    """One row's problem over nsets timing sets that share one cache and differ in their blocks and q."""

    def __init__(self, dname, d, g, hkv, q, lens, bs, window, softcap, sinks, nsets, device, gen, cpu_gen, ordered=False):
        self.dname, self.qt = dname, QTYPE[dname]
        self.fp8 = dname.endswith("_e4m3")
        self.dtype = TORCH_T[self.qt]
        self.cdtype = torch.float8_e4m3fn if self.fp8 else self.dtype
        self.d, self.g, self.hkv, self.h, self.qlen, self.bs = d, g, hkv, g * hkv, q, bs
        self.window, self.softcap = window, float(softcap)
        self.lens, self.batch, self.nsets = lens, len(lens), nsets
        self.T = self.batch * q
        self.scale = 1.0 / math.sqrt(d)
        self.k_scale, self.v_scale = (K_SCALE, V_SCALE) if self.fp8 else (1.0, 1.0)
        nb = [(L + bs - 1) // bs for L in lens]
        self.max_blocks = max(nb)
        used = nsets * sum(nb)
        # the physical blocks: a random permutation over all sets' logical blocks, so no two
        # (set, sequence, logical block) share one and consecutive keys are scattered
        perm = torch.randperm(used, generator=cpu_gen).to(torch.int32)
        if ordered:   # diagnostic (--table ordered): a sequence's blocks consecutive in memory
            perm = torch.arange(used, dtype=torch.int32)
        bt = torch.randint(0, used, (nsets, self.batch, self.max_blocks), generator=cpu_gen, dtype=torch.int32)
        k = 0
        for s in range(nsets):
            for i in range(self.batch):
                bt[s, i, :nb[i]] = perm[k:k + nb[i]]    # entries past a sequence's blocks: valid, unread
                k += nb[i]
        self.num_blocks = used
        self.block_table = bt.to(device)
        self.seq_lens = torch.tensor(lens, dtype=torch.int32, device=device)
        self.qsl = torch.tensor([i * q for i in range(self.batch + 1)], dtype=torch.int32, device=device)
        shape = (used, bs, hkv, d)
        self.k_cache = torch.empty(shape, dtype=self.cdtype, device=device)
        self.v_cache = torch.empty(shape, dtype=self.cdtype, device=device)
        fill_normal(self.k_cache, gen, 1.0, self.k_scale if self.fp8 else None)
        fill_normal(self.v_cache, gen, 1.0, self.v_scale if self.fp8 else None)
        self.q = torch.empty((nsets, self.T, self.h, d), dtype=self.dtype, device=device)
        fill_normal(self.q, gen, Q_STD, None)
        self.out = torch.empty_like(self.q)
        self.sinks = None
        if sinks:
            self.sinks = (3.0 + 6.0 * torch.rand(self.h, generator=gen, device=device)).to(torch.float32)
        self.args = [self.make_args(s) for s in range(nsets)]

    def make_args(self, s):
        q, o, kc, vc, bt = self.q[s], self.out[s], self.k_cache, self.v_cache, self.block_table[s]
        a = AttnArgs()
        a.q, a.out, a.k_cache, a.v_cache = q.data_ptr(), o.data_ptr(), kc.data_ptr(), vc.data_ptr()
        a.block_table, a.seq_lens, a.query_start_loc = bt.data_ptr(), self.seq_lens.data_ptr(), self.qsl.data_ptr()
        a.sinks = self.sinks.data_ptr() if self.sinks is not None else None
        a.q_stride_tok, a.o_stride_tok = q.stride(0), o.stride(0)
        a.q_stride_head, a.o_stride_head = q.stride(1), o.stride(1)
        a.k_stride_block, a.v_stride_block = kc.stride(0), vc.stride(0)
        a.k_stride_slot, a.v_stride_slot = kc.stride(1), vc.stride(1)
        a.k_stride_head, a.v_stride_head = kc.stride(2), vc.stride(2)
        assert q.stride(2) == 1 and o.stride(2) == 1 and kc.stride(3) == 1 and vc.stride(3) == 1
        a.bt_stride = bt.stride(0)
        a.num_seqs, a.num_tokens = self.batch, self.T
        a.num_heads, a.num_kv_heads, a.head_size, a.block_size = self.h, self.hkv, self.d, self.bs
        a.max_query_len, a.max_seq_len = self.qlen, max(self.lens)
        a.window, a.scale, a.softcap = self.window, self.scale, self.softcap
        a.k_scale, a.v_scale = self.k_scale, self.v_scale
        a.num_segments, a.partials = 0, None     # bind's
        return a

    def reference(self, s):
        return reference64(self.q[s], self.k_cache, self.v_cache, self.block_table[s], self.seq_lens, self.qsl,
                           self.scale, self.softcap, self.window, self.sinks, self.k_scale, self.v_scale)

    def bytes_moved(self):
        """compulsory bytes of one launch: the K/V keys some row sees, q, out, the int metadata"""
        kv_elt = self.k_cache.element_size()
        keys = sum(visible_keys(L, self.qlen, self.window) for L in self.lens)
        kv = 2.0 * keys * self.hkv * self.d * kv_elt
        qo = 2.0 * self.T * self.h * self.d * self.q.element_size()
        meta = 4.0 * (sum((L + self.bs - 1) // self.bs for L in self.lens) + 2 * self.batch + 1)
        if self.sinks is not None:
            meta += 4.0 * self.h
        return kv + qo + meta


def cold_sets(est, most):
    """copies of a problem's inputs a graph cycles through so that each launch finds none of its
    bytes in L2 (twice L2 over a set's estimated bytes), at most `most`"""
    return max(1, min(most, math.ceil(2 * L2_BYTES / est)))


def set_bytes_estimate(dname, d, g, hkv, q, lens, bs, window):
    kv_elt = 1 if dname.endswith("_e4m3") else 2
    keys = sum(visible_keys(L, q, window) for L in lens)
    return 2.0 * keys * hkv * d * kv_elt + 2.0 * len(lens) * q * g * hkv * d * 2


def fill_normal(t, gen, std, fp8_scale, chunk=1 << 26):
    """t <- N(0, std^2) in chunks (no full-size fp32 temporary); fp8: round(x / scale) saturated."""
    flat = t.view(-1)
    for c in flat.split(chunk):
        x = torch.randn(c.numel(), generator=gen, device=t.device, dtype=torch.float32) * std
        if fp8_scale is not None:
            x = (x / fp8_scale).clamp_(-FP8_MAX, FP8_MAX)
        else:
            x = torch.where(x == 0, torch.full_like(x, 0.5), x)     # no zeros (they hide unwritten outputs)
        c.copy_(x)


# ---------------------------------------------------------------------------------------------
# the float64 reference


def reference64(q, k_cache, v_cache, block_table, seq_lens, qsl, scale, softcap, window, sinks, k_scale, v_scale):
    """templates/abi/attn.h's function in float64, on q's device: [num_tokens][num_heads][head_size]."""
    T, H, D = q.shape
    bs, hkv = k_cache.shape[1], k_cache.shape[2]
    g = H // hkv
    out = torch.zeros((T, H, D), dtype=torch.float64, device=q.device)
    lens = seq_lens.tolist()
    starts = qsl.tolist()
    for i, L in enumerate(lens):
        t0, t1 = starts[i], starts[i + 1]
        ql = t1 - t0
        if ql <= 0 or L <= 0:
            continue
        nb = (L + bs - 1) // bs
        blocks = block_table[i, :nb].long()
        K = gather_blocks(k_cache, blocks).reshape(nb * bs, hkv, D)[:L].to(torch.float64) * k_scale
        V = gather_blocks(v_cache, blocks).reshape(nb * bs, hkv, D)[:L].to(torch.float64) * v_scale
        Q = q[t0:t1].to(torch.float64).reshape(ql, hkv, g, D)            # head h = kv * g + gi
        s = torch.einsum("tkgd,jkd->kgtj", Q, K) * scale                 # [hkv, g, ql, L]
        if softcap > 0:
            s = softcap * torch.tanh(s / softcap)
        pos = (L - ql) + torch.arange(ql, device=q.device)               # bottom-right aligned
        j = torch.arange(L, device=q.device)
        vis = j[None, :] <= pos[:, None]
        if window > 0:
            vis = vis & (pos[:, None] - j[None, :] < window)
        s = s.masked_fill(~vis, float("-inf"))
        m = s.amax(dim=-1)                                               # [hkv, g, ql]
        if sinks is not None:
            sk = sinks.to(torch.float64).reshape(hkv, g, 1).expand_as(m)
            m = torch.maximum(m, sk)
        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
        p = torch.exp(s - m[..., None])                                  # masked keys: 0
        l = p.sum(dim=-1)
        if sinks is not None:
            l = l + torch.exp(sk - m)
        o = torch.einsum("kgtj,jkd->tkgd", p, V)                         # [ql, hkv, g, D]
        lt = l.permute(2, 0, 1)[..., None]
        o = torch.where(lt > 0, o / torch.where(lt > 0, lt, torch.ones_like(lt)), torch.zeros_like(o))
        out[t0:t1] = o.reshape(ql, H, D)
    return out


def gather_blocks(cache, idx):
    """cache[idx] (fp8 caches through a uint8 view: indexing kernels need not cover float8 types)"""
    if cache.element_size() == 1 and cache.is_floating_point():
        return cache.view(torch.uint8)[idx].view(cache.dtype)
    return cache[idx]


def rel_error(got, ref):
    g = got.to(torch.float64)
    if not torch.isfinite(g).all():
        return float("nan")
    den = ref.norm().item()
    return (g - ref).norm().item() / (den if den > 0 else 1.0)


def timing_setup():
    """the stream a timing script launches on, the buffer that flushes L2 before each replay, and the
    seeded generators (device, host) its problems' values and lengths come from"""
    stream = torch.cuda.Stream()
    flush = torch.empty(2 * L2_BYTES, dtype=torch.uint8, device="cuda")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    cpu_gen = torch.Generator()
    cpu_gen.manual_seed(4321)
    return stream, flush, gen, cpu_gen


def launch_checked(kt, dname, P, ref, stream):
    """kt's choice for P's set 0, launched once into a NaN-poisoned out and held to ref: (choice,
    relative error, within the bound), or (None, the refusal's message, False)"""
    rc, ch, err = kt.choose(dname, P.args[0])
    if rc != KT_OK:
        return None, err, False
    with torch.cuda.stream(stream):
        P.out[0].fill_(float("nan"))
        kt.run(dname, P.args[0])
    stream.synchronize()
    e = rel_error(P.out[0], ref)
    return ch, e, e <= BOUND[P.qt]


# ---------------------------------------------------------------------------------------------
# peers: torch SDPA on contiguous KV


def sdpa_backends():
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        return None, [], "torch.nn.attention.sdpa_kernel: %s" % e
    out = []
    for label, name in (("cudnn", "CUDNN_ATTENTION"), ("flash", "FLASH_ATTENTION")):
        out.append((label, getattr(SDPBackend, name, None)))
    return sdpa_kernel, out, ""


class PeerData:
    """contiguous [batch][kv_heads][Lp][D] K/V of the first nsets sets, gathered through their block tables"""

    def __init__(self, P, nsets):
        self.nsets = nsets
        self.Lp = visible_keys(max(P.lens), P.qlen, P.window)
        B, hkv, D = P.batch, P.hkv, P.d
        self.k = torch.empty((nsets, B, hkv, self.Lp, D), dtype=P.dtype, device=P.q.device)
        self.v = torch.empty_like(self.k)
        for s in range(nsets):
            bt = P.block_table[s].long()                                 # [B, max_blocks]
            for src, dst, sc in ((P.k_cache, self.k, P.k_scale), (P.v_cache, self.v, P.v_scale)):
                x = gather_blocks(src, bt).reshape(B, P.max_blocks * P.bs, hkv, D)
                x = x[:, :self.Lp]          # padded: keys past a sequence's length are real (unread) cache data
                if P.fp8:
                    x = (x.to(torch.float32) * sc).to(P.dtype)
                dst[s].copy_(x.permute(0, 2, 1, 3))
        # q [B][H][qlen][D] of each set (same values as ours)
        self.q = P.q[:nsets].reshape(nsets, B, P.qlen, P.h, D).permute(0, 1, 3, 2, 4).contiguous()
        self.rep = None

    def repeated(self, g):
        if self.rep is None:
            self.rep = (self.k.repeat_interleave(g, dim=2), self.v.repeat_interleave(g, dim=2))
        return self.rep

    def bytes_moved(self, P, repeated):
        kvh = P.h if repeated else P.hkv
        return 2.0 * P.batch * kvh * self.Lp * P.d * 2 + 2.0 * P.T * P.h * P.d * 2


def peer_method(sdpa_kernel, backend, pd, P, gqa):
    F = torch.nn.functional

    def fn(s):
        with sdpa_kernel([backend]):
            if gqa:
                return F.scaled_dot_product_attention(pd.q[s], pd.k[s], pd.v[s], scale=P.scale, enable_gqa=True)
            k, v = pd.repeated(P.g)
            return F.scaled_dot_product_attention(pd.q[s], k[s], v[s], scale=P.scale)
    return fn


def try_peer(sdpa_kernel, backend, pd, P):
    """(fn, note) for the backend on this shape, or (None, reason)"""
    if backend is None:
        return None, "not in this torch"
    reasons = []
    for gqa in (True, False):
        fn = peer_method(sdpa_kernel, backend, pd, P, gqa)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                fn(0)
                torch.cuda.synchronize()
                return fn, ("enable_gqa" if gqa else "kv repeated to %d heads" % P.h)
            except Exception as e:       # the backend refuses: its warnings say why
                why = "; ".join(str(x.message).split("\n")[0] for x in w) or str(e).split("\n")[0]
                reasons.append(("gqa: " if gqa else "repeat: ") + why[:300])
    return None, " | ".join(reasons)


# ---------------------------------------------------------------------------------------------
# timing


def capture(fn, nsets, launches, stream):
    """A CUDA graph of `launches` calls fn(set), the sets in turn, captured on `stream` (one stream for
    all of ours: libktrt binds a split-KV workspace slot per stream, and has only a few)."""
    with torch.cuda.stream(stream):
        for s in range(min(nsets, 2)):          # warm-up outside the capture (module loads, cuDNN plans)
            fn(s)
    stream.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=stream, capture_error_mode="thread_local"):
        for i in range(launches):
            fn(i % nsets)
    torch.cuda.synchronize()
    return g


def time_graph(g, launches, flush, stream):
    with torch.cuda.stream(stream):
        flush.zero_()                           # L2 holds nothing of the inputs at the start
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
    e1.synchronize()
    return e0.elapsed_time(e1) * 1e3 / launches     # microseconds a launch


def launch_floor_us(stream, launches=20, reps=9):
    """The time a launch in a graph of `launches` dependent one-element kernels (median of reps
    replays, microseconds): what a launch of a chain costs before its kernel does anything."""
    x = torch.zeros(1, device="cuda")
    g = capture(lambda i: x.add_(1), 1, launches, stream)
    none = torch.empty(0, device="cuda")
    return statistics.median(time_graph(g, launches, none, stream) for _ in range(reps))


# ---------------------------------------------------------------------------------------------


def ints(s):
    return [int(x) for x in str(s).split(",") if x != ""]


def floats(s):
    return [float(x) for x in str(s).split(",") if x != ""]


def fmt(x, spec="%.2f"):
    return spec % x if isinstance(x, float) and math.isfinite(x) else "-"


def check_replay(kt, P, dname, stream, cpu_gen, bound):
    """A graph captured on set 0 and replayed after its seq_lens were rewritten in place, as vLLM
    replays a decode graph every step with other lengths (the host-side maxima, the bucket and the
    segment count stay the capture's): each sequence keeps between its query rows and its length,
    the output must match the reference of the new lengths. Returns the failure count."""
    g = capture(lambda s: kt.run(dname, P.args[0]), 1, 1, stream)
    saved = P.seq_lens.clone()
    fails = 0
    for trial in range(2):
        new = [P.qlen + int(torch.randint(0, max(1, L - P.qlen + 1), (1,), generator=cpu_gen)) for L in P.lens]
        with torch.cuda.stream(stream):
            P.seq_lens.copy_(torch.tensor(new, dtype=torch.int32))
            P.out[0].fill_(float("nan"))
            g.replay()
            ref = reference64(P.q[0], P.k_cache, P.v_cache, P.block_table[0], P.seq_lens, P.qsl, P.scale,
                              P.softcap, P.window, P.sinks, P.k_scale, P.v_scale)
        stream.synchronize()
        e = rel_error(P.out[0], ref)
        ok = e <= bound
        print("   graph replayed with seq_lens %s%s: err %.2e%s" % (new[:4], "..." if len(new) > 4 else "", e,
                                                                   "" if ok else "  WRONG"))
        fails += 0 if ok else 1
    P.seq_lens.copy_(saved)
    torch.cuda.synchronize()
    del g
    return fails


def run_row(a, kt, cfg, stream, flush, ceiling, gen, cpu_gen, peers_api):
    """one problem: check, time, return (rows for the tsv, summary dict, failures)"""
    dname, d, g, hkv, q, batch, ctx, window, softcap, sinks = cfg
    lens = seq_lengths(batch, ctx, q, a.lens, cpu_gen)
    est = set_bytes_estimate(dname, d, g, hkv, q, lens, a.bs, window)
    nsets = 1 if a.check_only else cold_sets(est, a.max_cold_sets)
    launches = 1 if a.check_only else min(a.max_launches, max(a.launches, nsets))
    if not a.check_only and launches < nsets:
        nsets = launches
    tag = "%s d=%d g=%d hkv=%d q=%d batch=%d ctx=%d bs=%d win=%d cap=%g sink=%d" % (
        dname, d, g, hkv, q, batch, ctx, a.bs, window, softcap, sinks)
    need = est * nsets * (1 if a.check_only else 2.5) / 1e9
    if need > a.mem_gb:
        print("%s: skipped, needs ~%.0f GB (--mem-gb %g)" % (tag, need, a.mem_gb))
        return [], None, 0
    with torch.cuda.stream(stream):
        P = Problem(dname, d, g, hkv, q, lens, a.bs, window, softcap, sinks, nsets, "cuda", gen, cpu_gen,
                    ordered=a.table == "ordered")
    stream.synchronize()
    summary = {"cfg": cfg, "kernel": "", "path": "", "split": "", "err": float("nan"), "times": {}, "notes": []}

    rc, ch, err = kt.choose(dname, P.args[0])
    summary["path"] = ch.path.decode(errors="replace")
    summary["kernel"] = ch.kernel.decode(errors="replace")
    summary["split"] = ch.splitk
    key = ch.problem_key.decode(errors="replace")
    print("%s\n   key: %s\n   %s %s (split %d): %s" % (tag, key, summary["path"], summary["kernel"] or "-", ch.splitk,
                                                     ch.reason.decode(errors="replace")))
    if rc != KT_OK:
        print("   refused: rc %d: %s" % (rc, err))
        summary["notes"].append("refused")
        return [], summary, 1

    # correctness: poisoned out, one launch, float64 reference; the first and the last set
    bound = BOUND[P.qt]
    failures = 0
    errs = []
    for s in sorted({0, nsets - 1}):
        with torch.cuda.stream(stream):
            P.out[s].fill_(float("nan"))
            try:
                kt.run(dname, P.args[s])
            except RuntimeError as e:
                print("   launch failed: %s" % e)
                summary["notes"].append("launch failed")
                return [], summary, 1
            ref = P.reference(s)
        stream.synchronize()
        errs.append(rel_error(P.out[s], ref))
        del ref
    summary["err"] = max(errs) if all(math.isfinite(e) for e in errs) else float("nan")
    if not (summary["err"] <= bound):
        print("   WRONG: rel err %s > bound %.2e" % (errs, bound))
        failures += 1
    out_checked = P.out[0].clone()
    bm = P.bytes_moved()
    if a.check_only:
        print("   err %.2e (bound %.2e)" % (summary["err"], bound))
        if a.replay_lengths:
            failures += check_replay(kt, P, dname, stream, cpu_gen, bound)
        return [], summary, failures

    # methods: (label, fn(set), nsets, bytes, note)
    methods = [("ours", lambda s: kt.run(dname, P.args[s]), nsets, bm, "")]
    pd = None
    if peers_api[0] is not None and not a.no_peers:
        npeer = max(1, min(nsets, math.ceil(2 * L2_BYTES / max(1.0, 2.0 * batch * hkv * visible_keys(ctx, q, window)
                                                                 * d * 2))))
        with torch.cuda.stream(stream):
            pd = PeerData(P, npeer)
        stream.synchronize()
        for label, backend in peers_api[1]:
            fn, note = try_peer(peers_api[0], backend, pd, P)
            if fn is None:
                print("   %s refused: %s" % (label, note))
                summary["notes"].append("%s refused" % label)
                continue
            rep = note.startswith("kv repeated")
            methods.append((label, fn, npeer, pd.bytes_moved(P, rep), note))
    methods.append(("ours again", methods[0][1], nsets, bm, "control"))

    graphs = []
    for label, fn, ns, b, note in methods:
        try:
            graphs.append((label, capture(fn, ns, launches, stream)))
        except Exception as e:
            print("   %s: capture failed: %s" % (label, str(e).split("\n")[0]))
            graphs.append((label, None))
            if label.startswith("ours"):
                failures += 1
                summary["notes"].append("%s capture failed" % label)
    times = {label: [] for label, _ in graphs}
    for rnd in range(a.rounds):
        k = rnd % len(graphs)
        for label, gr in graphs[k:] + graphs[:k]:
            if gr is not None:
                times[label].append(time_graph(gr, launches, flush, stream))
    del graphs
    torch.cuda.synchronize()
    # after the replays: the same answer (a moving error is a race)
    with torch.cuda.stream(stream):
        ref = P.reference(0)
    stream.synchronize()
    e_after = rel_error(P.out[0], ref)
    if not torch.equal(P.out[0], out_checked):
        print("   note: out after the replays differs bitwise from the checked launch (err %.2e)" % e_after)
        summary["notes"].append("replays differ")
    if not (e_after <= bound):
        print("   WRONG after the replays: rel err %.2e > bound %.2e" % (e_after, bound))
        failures += 1
    summary["err"] = max(summary["err"], e_after) if math.isfinite(e_after) else float("nan")

    rows = []
    print("   %d sets x %d launches a graph, ours reads %.1f MB a launch%s" % (
        nsets, launches, bm / 1e6, "" if pd is None else "; peers Lmax=%d keys, %d sets" % (pd.Lp, pd.nsets)))
    base = statistics.median(times["ours"]) if times.get("ours") else float("nan")
    for label, fn, ns, b, note in methods:
        t = times.get(label, [])
        med = statistics.median(t) if t else float("nan")
        row = {"dtype": dname, "d": d, "g": g, "hkv": hkv, "q": q, "batch": batch, "ctx": ctx, "bs": a.bs,
               "window": window, "softcap": softcap, "sinks": sinks, "lens": a.lens, "method": label,
               "median_us": med, "min_us": min(t) if t else float("nan"), "max_us": max(t) if t else float("nan"),
               "bytes": b, "gbs": b / (med * 1e-6) / 1e9 if t else float("nan"),
               "pct_ceiling": 100.0 * b / (med * 1e-6) / 1e9 / ceiling if t else float("nan"),
               "x_ours": med / base if base > 0 else float("nan"),
               "rel_err": summary["err"] if label.startswith("ours") else float("nan"),
               "path": summary["path"] if label.startswith("ours") else "",
               "kernel": summary["kernel"] if label.startswith("ours") else "",
               "split": summary["split"] if label.startswith("ours") else "",
               "sets": ns, "launches": launches, "note": note}
        rows.append(row)
        summary["times"][label] = med
        if label == "ours":
            summary["gbs"], summary["pct"] = row["gbs"], row["pct_ceiling"]
        print("   %-11s %10s us [%9s, %9s]  %8s GB/s %6s%%  x%5s  %s" % (
            label, fmt(med), fmt(row["min_us"]), fmt(row["max_us"]), fmt(row["gbs"], "%.0f"),
            fmt(row["pct_ceiling"], "%.1f"), fmt(row["x_ours"]), note))
    del P, pd
    torch.cuda.empty_cache()
    return rows, summary, failures


def main_gpu(a):
    check_header()
    torch.manual_seed(0)
    dev = torch.cuda.get_device_name()
    ceiling = read_ceiling_gbs()
    print("device %s, torch %s; read ceiling %.0f GB/s (%%ceil below), copy ceiling (read + write) %.0f GB/s" % (
        dev, torch.__version__, ceiling, copy_ceiling_gbs()))
    print("peers: SDPA on contiguous unpaged KV padded to the batch's longest sequence (window: its last "
          "window+q-1 keys), no mask, non-causal, no softcap/sinks, fp8 rows read 16-bit KV; timed only.%s" % (
              " Lengths are equal (--lens equal): same keys as ours." if a.lens == "equal" else
              " Lengths are mixed: the peers read the padding too."))
    kt = Ktrt(a.lib, a.db, int(a.workspace_mb * (1 << 20)))
    peers_api = sdpa_backends()
    if peers_api[0] is None and not a.no_peers:
        print("peers unavailable: %s" % peers_api[2])
    stream, flush, gen, cpu_gen = timing_setup()

    all_rows, summaries, failed = [], [], 0
    for dname in a.dtype.split(","):
        if dname not in QTYPE:
            sys.exit("--dtype: %s not one of %s" % (dname, ",".join(QTYPE)))
        if dname.endswith("_e4m3") and not hasattr(torch, "float8_e4m3fn"):
            print("%s: this torch has no float8_e4m3fn; skipped" % dname)
            failed += 1
            continue
        for d in ints(a.d):
            for g in ints(a.g):
                for hkv in ints(a.hkv):
                    for q in ints(a.q):
                        for batch in ints(a.batch):
                            for ctx in ints(a.ctx):
                                for window in ints(a.window):
                                    for softcap in floats(a.softcap):
                                        for sinks in ints(a.sinks):
                                            cfg = (dname, d, g, hkv, q, batch, ctx, window, softcap, sinks)
                                            try:
                                                rows, summ, f = run_row(a, kt, cfg, stream, flush, ceiling, gen,
                                                                        cpu_gen, peers_api)
                                            except Exception as e:
                                                print("%s: failed: %s" % (cfg, e))
                                                failed += 1
                                                try:
                                                    torch.cuda.synchronize()
                                                except Exception as e2:
                                                    print("the CUDA context is lost (%s): stopping" % e2)
                                                    return finish(a, all_rows, summaries, failed, dev, ceiling)
                                                continue
                                            all_rows += rows
                                            if summ is not None:
                                                summaries.append(summ)
                                            failed += f
    return finish(a, all_rows, summaries, failed, dev, ceiling)


def finish(a, all_rows, summaries, failed, dev, ceiling):
    out = os.environ.get("OUT")
    if out and all_rows:
        cols = ["dtype", "d", "g", "hkv", "q", "batch", "ctx", "bs", "window", "softcap", "sinks", "lens", "method",
                "median_us", "min_us", "max_us", "x_ours", "bytes", "gbs", "pct_ceiling", "rel_err", "path", "split",
                "sets", "launches", "kernel", "note"]
        with open(os.path.join(out, a.tsv), "w") as f:
            f.write("# device %s; read ceiling %.1f GB/s; peers: contiguous KV padded to the batch's longest "
                    "(lens %s), non-causal, no softcap/sinks\n" % (dev, ceiling, a.lens))
            f.write("\t".join(cols) + "\n")
            for row in all_rows:
                f.write("\t".join(("%.4g" % row[c]) if isinstance(row[c], float) else str(row[c]) for c in cols) + "\n")
    print()
    hdr = "%-9s %4s %3s %3s %2s %5s %6s | %9s %-7s %5s | %9s | %9s | %6s %6s %6s | %6s %5s | %8s | %s" % (
        "dtype", "d", "g", "hkv", "q", "batch", "ctx", "ours us", "path", "split", "cudnn us", "flash us",
        "cud/us", "fla/us", "again", "GB/s", "%ceil", "err", "kernel")
    print(hdr)
    print("-" * len(hdr))
    for s in summaries:
        dname, d, g, hkv, q, batch, ctx, window, softcap, sinks = s["cfg"]
        t = s["times"]
        ours = t.get("ours", float("nan"))

        def ratio(k):
            v = t.get(k, float("nan"))
            return v / ours if ours > 0 else float("nan")
        extra = "" if (window, softcap, sinks) == (0, 0.0, 0) else " win=%d cap=%g sink=%d" % (window, softcap, sinks)
        print("%-9s %4d %3d %3d %2d %5d %6d | %9s %-7s %5s | %9s | %9s | %6s %6s %6s | %6s %5s | %8s | %s%s%s" % (
            dname, d, g, hkv, q, batch, ctx, fmt(ours), s["path"], s["split"], fmt(t.get("cudnn", float("nan"))),
            fmt(t.get("flash", float("nan"))), fmt(ratio("cudnn")), fmt(ratio("flash")), fmt(ratio("ours again"), "%.3f"),
            fmt(s.get("gbs", float("nan")), "%.0f"), fmt(s.get("pct", float("nan")), "%.1f"), fmt(s["err"], "%.2e"),
            s["kernel"], extra, (" [" + ", ".join(s["notes"]) + "]") if s["notes"] else ""))
    print("(cud/us, fla/us: the peer's time over ours, > 1 = ours faster; again: the control, ours again over ours; "
          "split: ktrt_choice.splitk of the serving variant)")
    print("%d failures (wrong result, refused problem or failed launch)" % failed)
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------------
# --self-test: CPU only


def naive_reference(q, k_cache, v_cache, block_table, seq_lens, qsl, scale, softcap, window, sinks, k_scale, v_scale):
    """the ABI's text, one query token and head at a time, in Python floats"""
    T, H, D = q.shape
    bs, hkv = k_cache.shape[1], k_cache.shape[2]
    grp = H // hkv
    out = torch.zeros((T, H, D), dtype=torch.float64)
    for i in range(seq_lens.shape[0]):
        L = int(seq_lens[i])
        t0, t1 = int(qsl[i]), int(qsl[i + 1])
        ctxlen = L - (t1 - t0)
        for t in range(t1 - t0):
            p = ctxlen + t
            for h in range(H):
                kvh = h // grp
                qv = [float(x) for x in q[t0 + t, h].to(torch.float64)]
                ss, vs = [], []
                for j in range(L):
                    if j > p or (window > 0 and p - j >= window):
                        continue
                    blk, slot = int(block_table[i, j // bs]), j % bs
                    kv = [float(x) * k_scale for x in k_cache[blk, slot, kvh].to(torch.float64)]
                    s = scale * sum(a * b for a, b in zip(qv, kv))
                    if softcap > 0:
                        s = softcap * math.tanh(s / softcap)
                    ss.append(s)
                    vs.append([float(x) * v_scale for x in v_cache[blk, slot, kvh].to(torch.float64)])
                if not ss:
                    continue                                  # no visible key: zeros
                m = max(ss + ([float(sinks[h])] if sinks is not None else []))
                den = sum(math.exp(s - m) for s in ss) + (math.exp(float(sinks[h]) - m) if sinks is not None else 0.0)
                for dd in range(D):
                    out[t0 + t, h, dd] = sum(math.exp(s - m) * v[dd] for s, v in zip(ss, vs)) / den
    return out


def self_test():
    fails = passes = 0

    def check(what, ok):
        nonlocal fails, passes
        print("%-72s %s" % (what, "ok" if ok else "FAIL"))
        fails += 0 if ok else 1
        passes += 1 if ok else 0

    check("sizeof(AttnArgs) == %d" % ATTN_ARGS_SIZE, ctypes.sizeof(AttnArgs) == ATTN_ARGS_SIZE)
    off = {"q_stride_tok": 64, "q_stride_head": 80, "k_stride_block": 88, "k_stride_slot": 104, "bt_stride": 120,
           "num_seqs": 124, "window": 156, "scale": 160, "v_scale": 172, "num_segments": 176, "partials": 184}
    check("AttnArgs field offsets as computed by hand",
          all(getattr(AttnArgs, k).offset == v for k, v in off.items()))
    hdr = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "templates", "abi", "attn.h")
    names = header_fields(hdr)
    check("AttnArgs mirrors templates/abi/attn.h's field names and order",
          names is None or names == [f[0] for f in AttnArgs._fields_])

    gen = torch.Generator()
    gen.manual_seed(7)
    lens = seq_lengths(6, 40, 3, "mixed", gen)
    check("mixed lengths: the first = ctx, the others in [ctx/2, ctx]",
          lens[0] == 40 and all(20 <= L <= 40 for L in lens))

    # a Problem on the CPU (fp16 storage): distinct physical blocks across sets, args strides
    P = Problem("fp16", 8, 3, 2, 2, [13, 7, 2], 4, 0, 0.0, 1, 3, "cpu", gen, gen)
    used = []
    for s in range(P.nsets):
        for i, L in enumerate(P.lens):
            used += P.block_table[s, i, :(L + 3) // 4].tolist()
    check("block tables: every (set, seq, logical block) its own physical block",
          len(used) == len(set(used)) == P.num_blocks)
    a0 = P.args[1]
    check("args: strides, dims and pointers of set 1",
          a0.q == P.q[1].data_ptr() and a0.q_stride_tok == 3 * 2 * 8 and a0.q_stride_head == 8 and
          a0.k_stride_block == 4 * 2 * 8 and a0.k_stride_slot == 16 and a0.k_stride_head == 8 and
          a0.bt_stride == P.max_blocks and a0.num_tokens == 6 and a0.num_heads == 6 and a0.max_seq_len == 13 and
          a0.sinks == P.sinks.data_ptr() and a0.partials is None and abs(a0.scale - 1 / math.sqrt(8)) < 1e-7)
    e = (reference64(P.q[1], P.k_cache, P.v_cache, P.block_table[1], P.seq_lens, P.qsl, P.scale, 0.0, 0, P.sinks,
                     1.0, 1.0) - P.reference(1)).abs().max().item()
    check("Problem.reference is reference64 of its set", e == 0.0)

    # the vectorized reference against the naive loop: varlen q (incl. context 0), window, softcap, sinks, scales
    D, hkv, grp, bs = 8, 2, 3, 4
    H = hkv * grp
    lens_t = [1, 5, 9, 13, 3]
    qls = [1, 2, 3, 1, 3]                 # the last: query_len == seq_len (no context)
    nb = sum((L + bs - 1) // bs for L in lens_t)
    nblocks = nb + 3
    perm = torch.randperm(nblocks, generator=gen)
    mb = max((L + bs - 1) // bs for L in lens_t)
    bt = torch.randint(0, nblocks, (len(lens_t), mb), generator=gen, dtype=torch.int32)
    k = 0
    for i, L in enumerate(lens_t):
        n = (L + bs - 1) // bs
        bt[i, :n] = perm[k:k + n].to(torch.int32)
        k += n
    qsl = torch.tensor([0] + [sum(qls[:i + 1]) for i in range(len(qls))], dtype=torch.int32)
    T = int(qsl[-1])
    seq_lens = torch.tensor(lens_t, dtype=torch.int32)
    cases = [(0.0, 0, False, 1.0, 1.0), (0.0, 3, False, 1.0, 1.0), (5.0, 0, False, 1.0, 1.0),
             (0.0, 0, True, 1.0, 1.0), (4.0, 4, True, 0.5, 0.25), (0.0, 1, True, 1.0, 1.0)]
    for cdt, qdt in ((torch.float16, torch.float16), (torch.bfloat16, torch.bfloat16)):
        for softcap, window, use_sinks, ks, vs in cases:
            kc = (torch.randn(nblocks, bs, hkv, D, generator=gen)).to(cdt)
            vc = (torch.randn(nblocks, bs, hkv, D, generator=gen)).to(cdt)
            qq = (torch.randn(T, H, D, generator=gen) * Q_STD).to(qdt)
            sk = (torch.randn(H, generator=gen) * 2).float() if use_sinks else None
            sc = 1 / math.sqrt(D)
            r = reference64(qq, kc, vc, bt, seq_lens, qsl, sc, softcap, window, sk, ks, vs)
            n = naive_reference(qq, kc, vc, bt, seq_lens, qsl, sc, softcap, window, sk, ks, vs)
            err = (r - n).abs().max().item()
            check("reference64 == naive  %s cap=%g win=%d sinks=%d k_scale=%g v_scale=%g (max |diff| %.1e)" % (
                str(cdt).replace("torch.", ""), softcap, window, use_sinks, ks, vs, err), err < 1e-12)
    # a check that catches a wrong alignment: top-left causal differs from bottom-right
    qq = torch.randn(T, H, D, generator=gen, dtype=torch.float64)
    kc = torch.randn(nblocks, bs, hkv, D, generator=gen, dtype=torch.float64)
    vc = torch.randn(nblocks, bs, hkv, D, generator=gen, dtype=torch.float64)
    r = reference64(qq, kc, vc, bt, seq_lens, qsl, 0.5, 0.0, 0, None, 1.0, 1.0)
    i, L = 2, lens_t[2]                    # seq 2: 3 query rows, context 6; row 0 at position 6 sees keys 0..6
    blocks = bt[i, :(L + bs - 1) // bs].long()
    K = kc[blocks].reshape(-1, hkv, D)[:7]
    V = vc[blocks].reshape(-1, hkv, D)[:7]
    t0 = int(qsl[i])
    s = (qq[t0, 0] * K[:, 0]).sum(-1) * 0.5
    o = (torch.softmax(s, 0)[:, None] * V[:, 0]).sum(0)
    check("causal bottom-right: row 0 of a 3-row sequence of 9 keys sees keys 0..6",
          (o - r[t0, 0]).abs().max().item() < 1e-12)
    if hasattr(torch, "float8_e4m3fn"):
        kc8 = (torch.randn(nblocks, bs, hkv, D, generator=gen) / K_SCALE).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
        vc8 = (torch.randn(nblocks, bs, hkv, D, generator=gen) / V_SCALE).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
        qq = torch.randn(T, H, D, generator=gen).to(torch.bfloat16)
        r = reference64(qq, kc8, vc8, bt, seq_lens, qsl, 0.3, 0.0, 0, None, K_SCALE, V_SCALE)
        n = naive_reference(qq, kc8.float(), vc8.float(), bt, seq_lens, qsl, 0.3, 0.0, 0, None, K_SCALE, V_SCALE)
        err = (r - n).abs().max().item()
        check("reference64 == naive  fp8 e4m3fn cache with k_scale, v_scale (max |diff| %.1e)" % err, err < 1e-12)
    else:
        print("%-72s skipped" % "fp8 e4m3fn cache (this torch has no float8_e4m3fn)")
    print("self-test: %d passed, %d failed" % (passes, fails))
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default="out/lib/libktrt.so")
    ap.add_argument("--db", default=None, help="ktune database (default: libktrt's layers)")
    ap.add_argument("--dtype", default="bf16", help="bf16,fp16,bf16_e4m3,fp16_e4m3")
    ap.add_argument("--d", default="128", help="head sizes")
    ap.add_argument("--g", default="8", help="query heads per kv head")
    ap.add_argument("--hkv", default="2", help="kv heads (of one rank)")
    ap.add_argument("--q", default="1,4", help="query rows per sequence (1 decode, 2..8 speculative verify)")
    ap.add_argument("--batch", default="1,8,32,128")
    ap.add_argument("--ctx", default="1024,4096,16384", help="keys of the longest sequence")
    ap.add_argument("--lens", default="mixed", choices=["mixed", "equal"],
                    help="mixed: others uniform in [ctx/2, ctx]; equal: all ctx (the peers read the same keys)")
    ap.add_argument("--bs", type=int, default=16, help="cache block size")
    ap.add_argument("--table", default="random", choices=["random", "ordered"],
                    help="block tables: a random permutation (serving), or each sequence's blocks in order "
                         "(a diagnostic: how much the scattered pages cost)")
    ap.add_argument("--window", default="0")
    ap.add_argument("--softcap", default="0")
    ap.add_argument("--sinks", default="0", help="0, 1 or 0,1")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--launches", type=int, default=20, help="launches a graph at least")
    ap.add_argument("--max-launches", type=int, default=2048)
    ap.add_argument("--max-cold-sets", type=int, default=2048)
    ap.add_argument("--mem-gb", type=float, default=100.0, help="skip rows whose buffers would exceed this")
    ap.add_argument("--workspace-mb", type=float, default=0.0, help="ktrt_options.workspace_bytes (0: the runtime's)")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--tsv", default="bench_attn.tsv", help="the table's file name under $OUT")
    ap.add_argument("--check-only", action="store_true", help="correctness only, no timing, no peers")
    ap.add_argument("--replay-lengths", action="store_true",
                    help="with --check-only: also replay a captured graph after rewriting seq_lens in place")
    ap.add_argument("--self-test", action="store_true", help="CPU only: the reference against a naive loop")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device (try --self-test)")
    return main_gpu(a)


if __name__ == "__main__":
    sys.exit(main())
