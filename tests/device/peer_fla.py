"""peer_fla.py: flash-linear-attention's chunked gated delta rule (fla.ops.gated_delta_rule, Triton)
as the GDN prefill's peer. fla is not installed on the device machine: a source tree is carried and
named by --fla (the folder holding fla/). Only the op's own modules are imported: the packages
above them (fla, fla.ops, fla.modules, fla.ops.gated_delta_rule) are entered as bare namespaces, so
neither the model layers and their dependencies (transformers) nor fla's naive references (einops)
ever load.

What the peer runs: fla's chunk_gated_delta_rule with the q/k L2 norm, the gate
(-exp(A_log) softplus(a + dt_bias)) and beta's sigmoid in its kernels, from each slot's state, the
final states out. What it does not: the causal conv (its input is the conv's output, computed once
outside the timing) and the output's gated norm. Its times are therefore a floor on the peer's
time for our op's whole work."""
import importlib
import os
import re
import sys
import types


def load(root):
    """fla's chunk_gated_delta_rule from the source tree under root (root/fla/...)"""
    pkg = os.path.join(os.path.abspath(root), "fla")
    if not os.path.isdir(os.path.join(pkg, "ops", "gated_delta_rule")):
        raise FileNotFoundError("--fla %s: no fla/ops/gated_delta_rule under it" % root)
    with open(os.path.join(pkg, "__init__.py")) as f:   # fla.utils reads the package's version
        v = re.search(r'__version__\s*=\s*"([^"]+)"', f.read())
    for name in ("fla", "fla.ops", "fla.modules", "fla.ops.gated_delta_rule"):
        if name not in sys.modules:
            m = types.ModuleType(name)
            m.__path__ = [os.path.join(pkg, *name.split(".")[1:])]
            if name == "fla":
                m.__version__ = v.group(1) if v else "0"
            sys.modules[name] = m
    return importlib.import_module("fla.ops.gated_delta_rule.chunk").chunk_gated_delta_rule


class Problem:
    """fla's inputs for one prefill row: the conv's output y [S][n][cdim] split into q, k, v (the
    layout fla takes: [B, T, H, D]), a and b raw, each slot's starting state [S][hv][dk][dv]."""

    def __init__(self, chunk, L, pf, y, start_ssm, S, n):
        import torch
        hkd = L.hk * L.dk
        self.chunk, self.L = chunk, L
        self.q = y[..., :hkd].reshape(S, n, L.hk, L.dk).contiguous()
        self.k = y[..., hkd:2 * hkd].reshape(S, n, L.hk, L.dk).contiguous()
        self.v = y[..., 2 * hkd:].reshape(S, n, L.hv, L.dv).contiguous()
        self.a = pf.ab[0].view(S, n, L.hv).float().contiguous()
        self.b = pf.ab[1].view(S, n, L.hv).contiguous()
        self.h0 = start_ssm.contiguous()
        self.A_log = L.A_log.float().contiguous()
        self.dt_bias = L.dt_bias.float().contiguous()
        self.torch = torch

    def __call__(self, i=0):
        """one call: (o [S][n][hv][dv], final states [S][hv][dk][dv] fp32)"""
        with self.torch.inference_mode():
            return self.chunk(self.q, self.k, self.v, self.a, self.b, scale=self.L.scale,
                              initial_state=self.h0, output_final_state=True,
                              use_qk_l2norm_in_kernel=True, use_beta_sigmoid_in_kernel=True,
                              use_gate_in_kernel=True, A_log=self.A_log, dt_bias=self.dt_bias)
