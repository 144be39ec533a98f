-- wgmma_swapab.lua: the variant space of templates/gemm/wgmma_swapab.hip, the decode GEMM on
-- Hopper's warpgroup instruction with the operands swapped (sm_90a only): weights are the
-- instruction's 64-row operand, tokens its N. Same ABI and op as the other GEMM recipes.
-- Axes as wgmma.hip reads them with KT_WGMMA_SWAP: BM tokens a block owns (the instruction's N),
-- BN weight rows, 64 per warpgroup (WN = BN / 16 warps, WM = 1), BK 64 (128-byte swizzled rows),
-- SK K segments reduced in the launch, ST stages in dynamic shared memory.

local STAGE_ALIGN = 1024   -- runtime/gemm_geometry.h KT_GEMM_STAGE_ALIGN

local function stage_bytes(p) return (p.BM + p.BN) * p.BK * 2 end

return {
  template = "wgmma_swapab.hip",
  law = "wgmma_swapab",
  kernel = "kt_gemm_wgswap",
  ops = { "gemm" },
  targets = { "sm_90a" },   -- wgmma and cp.async are Hopper's; other targets build nothing here
  axes = {
    { "dtype", { "bf16", "fp16" } },
    { "BM", { 8, 16, 32 } },
    { "BN", { 64 } },          -- one warpgroup: the most blocks for the narrow decode shapes
    { "BK", { 64 } },
    { "WM", { 1 } },
    { "WN", { 4 } },
    { "SK", { 1, 2, 4, 8 } },
    { "ST", { 4, 6 } },
  },

  threads = function(p, t) return p.WM * p.WN * t.wave_size end,

  -- kt_gemm_dynamic_shared: what every launch provides
  lds_bytes = function(p, t) return p.ST * stage_bytes(p) + STAGE_ALIGN end,
  lds_at_launch = true,

  constraint = function(p, t)
    if p.WN * 16 ~= p.BN then return false, "one warpgroup per 64 weight rows" end
    if p.ST * stage_bytes(p) + STAGE_ALIGN > t.lds_at_launch_max then return false, "stages over shared memory" end
    return true
  end,
}
