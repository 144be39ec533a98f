-- attn_ref.lua: the float64 GPU reference of paged attention (attn_ref.hip), one per dtype (the
-- q/out element and the cache's: 16-bit, or fp8 e4m3 decoded as the target's kernels decode it).
-- It reads only templates/abi/attn.h's struct, so it serves decode and prefill alike (the worker
-- finds it by name, runtime/attn_common.c): the tuner verifies against it; nothing dispatches it.
-- One code object serves every head size up to KT_ATTN_REF_MAX_D (templates/abi/attn_ref.h).
return {
  template = "attn_ref.hip",
  law = "ref",
  kernel = "kt_attn_ref",
  ops = { "reference:attn_decode", "reference:attn_prefill" },
  axes = {
    { "dtype", { "bf16", "fp16", "bf16_e4m3", "fp16_e4m3" } },
  },
  threads = function(p, t) return 256 end,
  -- kt_ref_smem: q (1024 doubles), the max tree, a chunk's weights and V row offsets (256 each),
  -- the series' 21 inverses
  lds_bytes = function(p, t) return 1024 * 8 + 3 * 256 * 8 + 21 * 8 end,
  constraint = function(p, t) return true end,
}
