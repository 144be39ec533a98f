-- wgmma_ws_swapab.lua: the variant space of templates/gemm/wgmma_ws_swapab.hip, the decode GEMM
-- on Hopper's warpgroup instruction, warp-specialized, operands swapped (sm_90a only): weights
-- are the instruction's 64-row operand, tokens its N. Same ABI and op as the other GEMM recipes.
-- Axes as wgmma_ws.hip reads them with KT_WGMMA_SWAP: BM tokens a block owns (the instruction's
-- N), BN weight rows (64 per computing warpgroup), WN warps (4 copying + 4 per computing
-- warpgroup), WM 1, BK 64 (128-byte swizzled rows), SK K segments reduced in the launch, ST
-- stages in dynamic shared memory (more stages: more weight bytes in flight per SM).

local STAGE_ALIGN = 1024   -- runtime/gemm_geometry.h KT_GEMM_STAGE_ALIGN

local function stage_bytes(p) return (p.BM + p.BN) * p.BK * 2 end

return {
  template = "wgmma_ws_swapab.hip",
  law = "wgmma_ws_swapab",
  kernel = "kt_gemm_wgwsswap",
  ops = { "gemm" },
  targets = { "sm_90a" },   -- wgmma, cp.async and mbarriers are Hopper's; other targets build nothing here
  axes = {
    { "dtype", { "bf16", "fp16" } },
    { "BM", { 8, 16, 32, 64 } },
    { "BN", { 64, 128 } },
    { "BK", { 64 } },
    { "WM", { 1 } },
    { "WN", { 8, 12 } },
    { "SK", { 1, 2, 4 } },
    { "ST", { 4, 8 } },
  },

  threads = function(p, t) return p.WM * p.WN * t.wave_size end,

  -- kt_gemm_dynamic_shared: what every launch provides
  lds_bytes = function(p, t) return p.ST * stage_bytes(p) + STAGE_ALIGN end,
  lds_at_launch = true,

  constraint = function(p, t)
    if p.WN ~= 4 + p.BN / 16 then return false, "one copying warpgroup and one per 64 weight rows" end
    if p.ST * stage_bytes(p) + STAGE_ALIGN > t.lds_at_launch_max then return false, "stages over shared memory" end
    return true
  end,
}
