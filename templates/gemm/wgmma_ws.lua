-- wgmma_ws.lua: the variant space of templates/gemm/wgmma_ws.hip, the warp-specialized prefill
-- GEMM on Hopper's warpgroup instruction (sm_90a only): one warpgroup copies, two compute. Same
-- ABI and op as the other GEMM recipes; the sweep times it against them for every problem.
-- Axes as wgmma_ws.hip reads them: BM split between the two computing warpgroups (64 or 128 rows
-- each), BN the instruction's N (144 and 192 cut some narrow shapes' N into whole tiles and more
-- of them, so the last wave is not half empty), BK 64 (128-byte swizzled rows), WM 12 warps (3
-- warpgroups), SK K segments reduced in the launch (for the shapes with few tiles), ST stages in
-- dynamic shared memory.

local STAGE_ALIGN = 1024   -- runtime/gemm_geometry.h KT_GEMM_STAGE_ALIGN

local function stage_bytes(p) return (p.BM + p.BN) * p.BK * 2 end

return {
  template = "wgmma_ws.hip",
  law = "wgmma_ws",
  kernel = "kt_gemm_wgws",
  ops = { "gemm" },
  targets = { "sm_90a" },   -- wgmma, cp.async and mbarriers are Hopper's; other targets build nothing here
  axes = {
    { "dtype", { "bf16", "fp16" } },
    { "BM", { 128, 256 } },
    { "BN", { 128, 144, 192, 224, 256 } },   -- 144: N 1152, 4608 in whole tiles; 192: 1152, 1536, 4608; 224: 3584
    { "BK", { 64 } },
    { "WM", { 12 } },
    { "WN", { 1 } },
    { "SK", { 1, 2, 4 } },
    { "ST", { 4, 6 } },   -- 3 won none of 266 problems on the H200 (bench/NOTES.md)
  },

  threads = function(p, t) return p.WM * p.WN * t.wave_size end,

  -- kt_gemm_dynamic_shared: what every launch provides
  lds_bytes = function(p, t) return p.ST * stage_bytes(p) + STAGE_ALIGN end,
  lds_at_launch = true,

  constraint = function(p, t)
    -- accumulators: BM * BN fp32 over the 256 computing threads; past 128 a thread the 384-thread
    -- block (at most 168 registers each) spills
    if p.BM * p.BN > 128 * 256 then return false, "accumulators over the register file" end
    if p.ST * stage_bytes(p) + STAGE_ALIGN > t.lds_at_launch_max then return false, "stages over shared memory" end
    return true
  end,
}
