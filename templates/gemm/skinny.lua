-- skinny.lua: the variant space of templates/gemm/skinny.hip, the decode GEMM on the vector
-- units (C = A . W^T for small M, one launch, no split-K workspace). Same ABI and op as dense.lua,
-- so the sweep times both families for every problem and keeps the faster.
-- Axes as skinny.hip reads them: BM token rows, BN weight rows, WM waves splitting K (WN = 1,
-- SK = 1), BK = K a wave streams per step (8 elements a lane x unroll).

local function div(a, b) return math.floor(a / b) end

return {
  template = "skinny.hip",
  law = "skinny",
  kernel = "kt_gemm_skinny",
  ops = { "gemm" },
  axes = {
    { "dtype", { "bf16", "fp16" } },
    { "BM", { 1, 2, 4, 8, 16 } },
    { "BN", { 2, 4, 8 } },
    { "BK", { 256, 512, 1024 } },
    { "WM", { 4, 8 } },
    { "WN", { 1 } },
    { "SK", { 1 } },
  },

  threads = function(p, t) return p.WM * t.wave_size end,

  lds_bytes = function(p, t) return p.WM * p.BM * p.BN * 4 end,

  constraint = function(p, t)
    local unroll = div(p.BK, 8 * t.wave_size)
    if unroll < 1 or p.BK % (8 * t.wave_size) ~= 0 then return false, "BK not 8 elements a lane" end
    if unroll > 2 then return false, "more than 2 chunks a row in flight" end
    -- Registers a lane: fp32 accumulators, the weight chunks in flight (4 a chunk) and their
    -- unpacked floats (8 a row), one A chunk unpacked, ~24 for addresses and loop state.
    local regs = p.BM * p.BN + unroll * p.BN * 4 + p.BN * 8 + 8 + 24
    if regs > 128 then return false, "registers would limit occupancy" end
    -- The weight bytes a block keeps in flight must fill a wave's loads: at least 2 rows.
    if p.BM * p.BN > 64 then return false, "too many accumulators" end
    return true
  end,
}
