-- prefill.lua: the variant space of templates/attn/prefill.hip, causal varlen paged prefill
-- (chunked prefill included; op attn_prefill, ABI templates/abi/attn.h, descriptor
-- runtime/op_attn_prefill.c). Axes as the template reads them: D head size, BM rows a block (the
-- GQA group folded into M: query tokens x the group's heads), BN keys a KV tile, NW warps (each
-- owns BM / NW rows, whole 16-row tiles). No split-KV in this version.

local function div(a, b) return math.floor(a / b) end
local PAD = 8

-- what prefill.hip's kt_smem holds: the Q stage, then (over it) the K / V tile ([key][d], one
-- buffer K then V) and P
local function smem_bytes(p)
  local q = p.BM * (p.D + PAD) * 2
  local kv = p.BN * (p.D + PAD) * 2
  return math.max(q, kv + p.BM * (p.BN + PAD) * 2)
end

return {
  family = "attn",
  template = "prefill.hip",
  kernel = "kt_attn_prefill",
  ops = { "attn_prefill" },
  axes = {
    { "dtype", { "bf16", "fp16", "bf16_e4m3", "fp16_e4m3" } },
    { "D", { 64, 128, 256, 512 } },
    { "BM", { 64, 128 } },
    { "BN", { 32, 64 } },
    { "NW", { 4, 8 } },
  },

  threads = function(p, t) return p.NW * t.wave_size end,

  lds_bytes = function(p, t) return smem_bytes(p) end,

  constraint = function(p, t)
    local threads = p.NW * t.wave_size
    local chunk = p.dtype:find("e4m3") and 16 or 8        -- cache elements a 16-byte load brings
    local per_key = div(p.D, chunk)
    if threads % per_key ~= 0 or p.BN % div(threads, per_key) ~= 0 then
      return false, "the KV tile does not split into whole keys a thread"
    end
    local keys = div(p.BN, div(threads, per_key))           -- keys (K or V chunks) a thread loads
    if p.BM % (16 * p.NW) ~= 0 then return false, "rows do not split into whole 16-row tiles a warp" end
    if smem_bytes(p) > t.lds_per_workgroup then return false, "LDS over the workgroup's" end
    -- registers a lane, all held across the KV loop: Q's A fragments (8 halves a lane on wave32,
    -- 4 on wave64), the O and S accumulators (16x16 fp32 over the wave), one K or V tile's chunks
    -- (4 words each) and their keys' pages (a word each), plus ~40 for row statistics, P
    -- fragments and addresses. A filter, not the truth: the compile's spill count decides
    -- (gfx11's replicated operands need twice Q's)
    local mw = div(p.BM, 16 * p.NW)
    local afrag, acc = div(128, t.wave_size), div(256, t.wave_size)
    local regs = mw * div(p.D, 16) * (afrag + acc) + mw * div(p.BN, 16) * acc + (4 + 1) * keys + 40
    local limit = t.max_regs_per_thread
    if t.vendor == "nvidia" then limit = math.min(limit, div(65536, threads)) end
    if regs > limit then return false, "registers over the lane's (Q, O and S held across the KV loop)" end
    return true
  end,
}
