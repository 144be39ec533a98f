-- wgmma.lua: the variant space of templates/gemm/wgmma.hip, the prefill GEMM on Hopper's warpgroup
-- matrix instruction (sm_90a only). Same ABI and op as dense.lua: the sweep times it against the
-- other templates for every problem and keeps the fastest.
-- Axes as wgmma.hip reads them: one warpgroup (4 warps) per 64 rows of BM (WM = BM / 16, WN = 1),
-- BN the instruction's N, BK the K of one shared-memory stage (64: 128-byte swizzled rows), ST
-- stages in dynamic shared memory, no split-K (prefill shapes have blocks enough).

local STAGE_ALIGN = 1024   -- runtime/gemm_geometry.h KT_GEMM_STAGE_ALIGN

local function div(a, b) return math.floor(a / b) end
local function stage_bytes(p) return (p.BM + p.BN) * p.BK * 2 end

return {
  template = "wgmma.hip",
  law = "wgmma",
  kernel = "kt_gemm_wgmma",
  ops = { "gemm" },
  targets = { "sm_90a" },   -- wgmma and cp.async are Hopper's; other targets build nothing here
  axes = {
    { "dtype", { "bf16", "fp16" } },
    { "BM", { 64, 128, 256 } },
    { "BN", { 64, 128, 256 } },
    { "BK", { 64 } },
    { "WM", { 4, 8, 16 } },
    { "WN", { 1 } },
    { "SK", { 1 } },
    { "ST", { 3, 4 } },   -- 6 won 11 of 211 prefill problems by < 2% on the H200 (bench/NOTES.md)
  },

  threads = function(p, t) return p.WM * p.WN * t.wave_size end,

  -- kt_gemm_dynamic_shared: what every launch provides
  lds_bytes = function(p, t) return p.ST * stage_bytes(p) + STAGE_ALIGN end,
  lds_at_launch = true,

  constraint = function(p, t)
    if p.WM * 16 ~= p.BM then return false, "one warpgroup per 64 rows" end
    -- what one block may have past the static 48 KiB once the launcher opts in
    if p.ST * stage_bytes(p) + STAGE_ALIGN > t.lds_at_launch_max then return false, "stages over shared memory" end
    local threads = p.WM * t.wave_size
    -- accumulators: BN / 2 fp32 a thread, plus ~40 for addresses and the epilogue; the block must
    -- fit the register file (64 Ki) at all
    if threads * (div(p.BN, 2) + 40) > 65536 then return false, "registers over the file" end
    return true
  end,
}
