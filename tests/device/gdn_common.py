"""gdn_common.py: what the GDN device scripts share (gdn_check.py, bench_gdn.py): the ctypes mirror
of templates/abi/gdn.h's kt_gdn_decode_args (checked against the header), a batch of sequences
over state pools on the GPU, the argument struct over them, and the float64 per-token reference
of ../shared/ref/gdn.md at the kernel's rounding points (conv outputs and o rounded to the dtype).
Errors are bench_attn.rel_error's (NaN for a non-finite output), judged with over() and worst_of()."""
import ctypes
import os

import torch
import torch.nn.functional as F

MAX_T, MAX_KW = 8, 4
DEVICE = "cuda"          # the self-test (gdn_check.py --self-test) sets "cpu"
TORCH_T = {"bf16": torch.bfloat16, "fp16": torch.float16}
_P, _LL, _I, _F = ctypes.c_void_p, ctypes.c_longlong, ctypes.c_int, ctypes.c_float


class GdnArgs(ctypes.Structure):
    """templates/abi/gdn.h: kt_gdn_decode_args."""
    _fields_ = [("qkv", _P), ("z", _P), ("a", _P), ("b", _P), ("A_log", _P), ("dt_bias", _P),
                ("conv_weight", _P), ("norm_weight", _P), ("conv_state", _P), ("ssm_state", _P),
                ("spec_log", _P), ("query_start_loc", _P), ("state_indices", _P), ("num_accepted", _P),
                ("out", _P), ("conv_slot_stride", _LL), ("ssm_slot_stride", _LL), ("log_slot_stride", _LL),
                ("conv_chan_stride", _I), ("conv_col_stride", _I), ("qkv_stride", _I), ("z_stride", _I),
                ("ab_stride", _I), ("out_stride", _I), ("batch", _I), ("num_k_heads", _I),
                ("num_v_heads", _I), ("dk", _I), ("dv", _I), ("conv_kw", _I), ("conv_len", _I),
                ("max_tokens", _I), ("state_vk", _I), ("scale", _F), ("norm_eps", _F), ("counters", _P),
                ("ahead", _I)]


class GdnPrefillArgs(ctypes.Structure):
    """templates/abi/gdn_prefill.h: kt_gdn_prefill_args."""
    _fields_ = [("qkv", _P), ("z", _P), ("a", _P), ("b", _P), ("A_log", _P), ("dt_bias", _P),
                ("conv_weight", _P), ("norm_weight", _P), ("conv_state", _P), ("ssm_state", _P),
                ("query_start_loc", _P), ("state_indices", _P), ("has_initial_state", _P), ("out", _P),
                ("conv_slot_stride", _LL), ("ssm_slot_stride", _LL), ("conv_chan_stride", _I),
                ("conv_col_stride", _I), ("qkv_stride", _I), ("z_stride", _I), ("ab_stride", _I),
                ("out_stride", _I), ("batch", _I), ("num_k_heads", _I), ("num_v_heads", _I), ("dk", _I),
                ("dv", _I), ("conv_kw", _I), ("tokens", _I), ("state_vk", _I), ("scale", _F), ("norm_eps", _F),
                ("chunks", _I), ("chunk_begin", _I), ("chunk_end", _I), ("ws_q", _P), ("ws_k", _P), ("ws_w", _P), ("ws_u", _P), ("ws_vn", _P),
                ("ws_h", _P), ("ws_kd", _P), ("ws_g", _P), ("ws_c", _P), ("ws_b", _P)]


def check_header(header_fields):
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "templates", "abi")
    for cls, hdr, struct in ((GdnArgs, "gdn.h", "kt_gdn_decode_args"),
                             (GdnPrefillArgs, "gdn_prefill.h", "kt_gdn_prefill_args")):
        names = header_fields(os.path.join(here, hdr), struct)
        mine = [f[0] for f in cls._fields_]
        if names is not None and names != mine:
            raise SystemExit("%s does not mirror templates/abi/%s:\n  header %s\n  here   %s" % (cls.__name__, hdr, names, mine))


class RefPools(ctypes.Structure):
    """runtime/gdn_ref.h: kt_gdn_ref_pools (float64 pools on the host)."""
    _fields_ = [("conv", _P), ("ssm", _P), ("log", _P), ("vk", _I)]


def ref_lib(libkt):
    """libkt.so with the float64 references' signatures (the CPU self-tests)"""
    lib = ctypes.CDLL(libkt)
    lib.kt_gdn_ref_step.argtypes = [_P, _I, ctypes.POINTER(RefPools), _P]
    lib.kt_gdn_ref_step.restype = None
    lib.kt_gdn_ref_prefill.argtypes = [_P, _I, _I, ctypes.POINTER(RefPools), _P]
    lib.kt_gdn_ref_prefill.restype = None
    return lib


def rnd(x, dt):
    """to the dtype through fp32, as the kernel rounds"""
    return x.float().to(TORCH_T[dt]).double()


class Layer:
    """One GDN layer's weights and its state pools (slots), on the GPU. Conv state [slot][channel]
    [column] (or [slot][column][channel] with ds=True: the layout vLLM's newer versions keep), the
    ssm state fp32 [slot][hv][dk][dv] (vk=1: [slot][hv][dv][dk]), the speculative log."""

    def __init__(self, dt, hk, hv, dk, dv, kw, slots, vk, ds, norm, gen):
        self.dt, self.hk, self.hv, self.dk, self.dv, self.kw, self.vk, self.ds, self.norm = dt, hk, hv, dk, dv, kw, vk, ds, norm
        self.cdim = 2 * hk * dk + hv * dv
        self.L = kw - 1 + MAX_T
        t = TORCH_T[dt]
        dev = DEVICE
        self.conv_w = ((torch.rand(self.cdim, kw, generator=gen, device=dev) - 0.5) * 1.2).to(t)
        self.norm_w = (0.5 + torch.rand(dv, generator=gen, device=dev)).to(t)
        self.A_log = -1.0 - 2.0 * torch.rand(hv, generator=gen, device=dev)
        self.dt_bias = torch.rand(hv, generator=gen, device=dev) * 2.0 - 1.0
        shape = (slots, self.L, self.cdim) if ds else (slots, self.cdim, self.L)
        self.conv = (torch.rand(shape, generator=gen, device=dev) * 2 - 1).to(t)
        self.ssm = torch.rand(slots, hv, dk, dv, generator=gen, device=dev) * 2 - 1
        if vk:
            self.ssm = self.ssm.transpose(2, 3).contiguous()
        self.log = torch.rand(slots, hv, MAX_T, dv, 2, generator=gen, device=dev)
        self.log[..., 0] = self.log[..., 0] * 2 - 1
        self.log[..., 1] = -0.01 - 0.49 * self.log[..., 1]
        self.scale = dk ** -0.5

    def conv_cols(self, slot):
        """[channel][column] of a slot, float64"""
        c = self.conv[slot].double()
        return c.t() if self.ds else c

    def state(self, slot):
        """[hv][dk][dv] of a slot, float64"""
        s = self.ssm[slot].double()
        return s.transpose(1, 2) if self.vk else s


class Step:
    """One call: a batch's token rows, metadata and out, and the argument struct over them."""

    def __init__(self, layer, ntok, slots, accepted, gen):
        """ntok[i] tokens of sequence i, slots[i] its slot (-1 padded), accepted: None (plain) or a
        list of num_accepted"""
        L = layer
        t = TORCH_T[L.dt]
        self.ntok, self.slots, self.accepted = list(ntok), list(slots), accepted
        T = sum(ntok)
        qsl = [0]
        for n in ntok:
            qsl.append(qsl[-1] + n)
        self.qsl_list = qsl
        pad = 16
        self.qkv_full = (torch.rand(T, L.cdim + pad, generator=gen, device=DEVICE) * 2 - 1).to(t)
        self.qkv = self.qkv_full[:, :L.cdim]
        self.z = (torch.rand(T, L.hv * L.dv, generator=gen, device=DEVICE) * 4 - 2).to(t)
        self.ab = (torch.rand(2, T, L.hv, generator=gen, device=DEVICE) * 4 - 2).to(t)
        self.out = torch.full((T, L.hv * L.dv), float("nan"), dtype=t, device=DEVICE)
        self.qsl = torch.tensor(qsl, dtype=torch.int32, device=DEVICE)
        self.idx = torch.tensor(slots, dtype=torch.int32, device=DEVICE)
        self.na = torch.tensor(accepted, dtype=torch.int32, device=DEVICE) if accepted is not None else None
        a = GdnArgs()
        a.qkv, a.z, a.a, a.b = self.qkv.data_ptr(), self.z.data_ptr(), self.ab[0].data_ptr(), self.ab[1].data_ptr()
        a.A_log, a.dt_bias = L.A_log.data_ptr(), L.dt_bias.data_ptr()
        a.conv_weight = L.conv_w.data_ptr()
        a.norm_weight = L.norm_w.data_ptr() if L.norm else None
        a.conv_state, a.ssm_state = L.conv.data_ptr(), L.ssm.data_ptr()
        a.spec_log = L.log.data_ptr() if accepted is not None else None
        a.query_start_loc, a.state_indices = self.qsl.data_ptr(), self.idx.data_ptr()
        a.num_accepted = self.na.data_ptr() if self.na is not None else None
        a.out = self.out.data_ptr()
        a.conv_slot_stride = L.conv.stride(0)
        a.conv_chan_stride, a.conv_col_stride = (1, L.cdim) if L.ds else (L.L, 1)
        a.ssm_slot_stride = L.ssm.stride(0)
        a.log_slot_stride = L.log.stride(0)
        a.qkv_stride, a.z_stride, a.ab_stride, a.out_stride = self.qkv_full.stride(0), L.hv * L.dv, L.hv, L.hv * L.dv
        a.batch, a.num_k_heads, a.num_v_heads, a.dk, a.dv = len(ntok), L.hk, L.hv, L.dk, L.dv
        a.conv_kw, a.conv_len, a.max_tokens, a.state_vk = L.kw, L.L, max(ntok), L.vk
        a.scale, a.norm_eps = L.scale, 1e-6
        self.args = a

    def rows(self, i):
        return slice(self.qsl_list[i], self.qsl_list[i + 1])


class Prefill:
    """One prefill call: sequences of lens[i] tokens on slots[i] (-1 padded), init[i] 0 where the
    sequence starts from zeros rather than its slot; the token rows, metadata, out and the argument
    struct over them."""

    def __init__(self, layer, lens, slots, init, gen):
        L = layer
        t = TORCH_T[L.dt]
        self.lens, self.slots, self.init = list(lens), list(slots), list(init)
        qsl = [0]
        for n in lens:
            qsl.append(qsl[-1] + n)
        self.qsl_list = qsl
        T = qsl[-1]
        self.qkv_full = (torch.rand(T, L.cdim + 16, generator=gen, device=DEVICE) * 2 - 1).to(t)
        self.qkv = self.qkv_full[:, :L.cdim]
        self.z = (torch.rand(T, L.hv * L.dv, generator=gen, device=DEVICE) * 4 - 2).to(t)
        self.ab = (torch.rand(2, T, L.hv, generator=gen, device=DEVICE) * 4 - 2).to(t)
        self.out = torch.full((T, L.hv * L.dv), float("nan"), dtype=t, device=DEVICE)
        self.qsl = torch.tensor(qsl, dtype=torch.int32, device=DEVICE)
        self.idx = torch.tensor(slots, dtype=torch.int32, device=DEVICE)
        self.has = torch.tensor(init, dtype=torch.int32, device=DEVICE)
        a = GdnPrefillArgs()
        a.qkv, a.z, a.a, a.b = self.qkv.data_ptr(), self.z.data_ptr(), self.ab[0].data_ptr(), self.ab[1].data_ptr()
        a.A_log, a.dt_bias, a.conv_weight = L.A_log.data_ptr(), L.dt_bias.data_ptr(), L.conv_w.data_ptr()
        a.norm_weight = L.norm_w.data_ptr() if L.norm else None
        a.conv_state, a.ssm_state = L.conv.data_ptr(), L.ssm.data_ptr()
        a.query_start_loc, a.state_indices, a.has_initial_state = self.qsl.data_ptr(), self.idx.data_ptr(), self.has.data_ptr()
        a.out = self.out.data_ptr()
        a.conv_slot_stride, a.ssm_slot_stride = L.conv.stride(0), L.ssm.stride(0)
        a.conv_chan_stride, a.conv_col_stride = (1, L.cdim) if L.ds else (L.L, 1)
        a.qkv_stride, a.z_stride, a.ab_stride, a.out_stride = self.qkv_full.stride(0), L.hv * L.dv, L.hv, L.hv * L.dv
        a.batch, a.num_k_heads, a.num_v_heads, a.dk, a.dv = len(lens), L.hk, L.hv, L.dk, L.dv
        a.conv_kw, a.tokens, a.state_vk = L.kw, T, L.vk
        a.scale, a.norm_eps = L.scale, 1e-6
        self.args = a

    def rows(self, i):
        return slice(self.qsl_list[i], self.qsl_list[i + 1])


class Truth:
    """The per-token recurrence of one sequence in float64: its conv history (the last kw - 1 inputs,
    [channel][kw-1]) and state [hv][dk][dv]."""

    def __init__(self, hist, S):
        self.hist, self.S = hist.clone(), S.clone()

    def run(self, L, qkv, a, b, z, commit):
        """outputs [n][hv*dv] (float64, rounded as the kernel's) of tokens qkv [n][cdim]; the state
        advances only with commit"""
        hist, S = self.hist.clone(), self.S.clone()
        w = L.conv_w.double()
        ratio = L.hv // L.hk
        outs = []
        for t in range(qkv.shape[0]):
            win = torch.cat([hist, qkv[t].double()[:, None]], dim=1)            # [cdim][kw]
            y = rnd(F.silu((win * w).sum(1)), L.dt)
            hist = win[:, 1:]
            hkd = L.hk * L.dk
            q = y[:hkd].view(L.hk, L.dk)
            k = y[hkd:2 * hkd].view(L.hk, L.dk)
            v = y[2 * hkd:].view(L.hv, L.dv)
            q = q / torch.sqrt((q * q).sum(1, keepdim=True) + 1e-6) * L.scale
            k = k / torch.sqrt((k * k).sum(1, keepdim=True) + 1e-6)
            q = q.repeat_interleave(ratio, 0)
            k = k.repeat_interleave(ratio, 0)
            x = a[t].double() + L.dt_bias.double()
            sp = torch.where(x > 20, x, torch.log1p(torch.exp(x)))
            g = -torch.exp(L.A_log.double()) * sp
            beta = torch.sigmoid(b[t].double())
            S = S * torch.exp(g)[:, None, None]
            kv = torch.einsum("hij,hi->hj", S, k)
            d = beta[:, None] * (v - kv)
            S = S + k[:, :, None] * d[:, None, :]
            o = rnd(torch.einsum("hij,hi->hj", S, q), L.dt)
            if L.norm:
                r = torch.rsqrt((o * o).mean(1, keepdim=True) + 1e-6)
                o = rnd(o * r * L.norm_w.double()[None, :] * F.silu(z[t].double().view(L.hv, L.dv)), L.dt)
            outs.append(o.reshape(-1))
        if commit:
            self.hist, self.S = hist, S
        return torch.stack(outs) if outs else torch.empty(0, L.hv * L.dv, dtype=torch.float64, device=qkv.device)


def worst_of(a, b):
    """the larger error, a NaN (bench_attn.rel_error's answer for a non-finite output) winning"""
    return b if not b <= a else a


def over(e, bound):
    """e fails bound: above it, or NaN"""
    return not e <= bound
