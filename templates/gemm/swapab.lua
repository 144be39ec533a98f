-- swapab.lua: the variant space of templates/gemm/swapab.hip, the decode GEMM on the matrix units
-- with the operands swapped (weights are the MMA's 16-row operand, tokens its 16 columns), one
-- launch (split-K, where chosen, is reduced by the last block of each tile in the same launch).
-- Same ABI and op as dense.lua and skinny.lua: the sweep times all three for every problem and
-- keeps the fastest.
-- Axes as swapab.hip reads them: BM tokens a block owns, BN weight rows a block owns, WM waves
-- splitting K (WN = 1), SK K segments (blocks along grid.z; 0 = stream-K: two blocks a compute
-- unit, each streaming the same share of all tiles' K steps), BK = K a wave streams per step (a
-- multiple of the direct span, 16 or 32 by target: 32 serves every target).

local function div(a, b) return math.floor(a / b) end

-- 32-bit registers a lane holds for one 16-row operand tile per 32 K: 16 x 32 x 2 bytes over the
-- wave's lanes; RDNA3 replicates operands across the half-waves (twice that).
local function tile_regs(t)
  local r = div(256, t.wave_size)
  if t.mma == "wmma-gfx11" then r = 2 * r end
  return r
end

return {
  template = "swapab.hip",
  law = "swapab",
  kernel = "kt_gemm_swapab",
  ops = { "gemm" },
  axes = {
    { "dtype", { "bf16", "fp16" } },
    { "BM", { 8, 16, 32 } },
    { "BN", { 16, 32, 64 } },
    { "BK", { 64, 128, 256 } },
    { "WM", { 2, 4, 8, 16 } },
    { "WN", { 1 } },
    { "SK", { 0, 1, 2, 4 } },
  },

  threads = function(p, t) return p.WM * t.wave_size end,

  lds_bytes = function(p, t) return p.WM * p.BM * p.BN * 4 end,

  constraint = function(p, t)
    if p.WM * p.BM * p.BN * 4 > math.min(t.lds_per_workgroup, 32768) then
      return false, "partials over 32 KiB of LDS"
    end
    -- BM = 8 saves the upper token half's loads and registers only where the direct layout puts
    -- token rows 8-15 in chunks of their own (mma.sync); elsewhere it is BM = 16 with more blocks.
    if p.BM == 8 and t.mma ~= "mma-sync" then return false, "8 tokens: no saving on this layout" end
    if p.WM * t.wave_size > 1024 then return false, "more than 1024 threads" end
    -- Registers a lane: the weight and token chunks of a whole step (all issued before the first
    -- MMA), the accumulators, ~32 for addresses and loop state. A lane that holds more than ~192
    -- leaves too few waves to cover a barrier; the code object's real count is read back.
    local per32 = tile_regs(t)
    -- (weights for two whole steps, the one being used and the next in flight; tokens for one
    -- span at a time)
    local tm = math.max(1, div(p.BM, 16))
    local chunks = 2 * div(p.BK, 32) * div(p.BN, 16) * per32 + tm * per32
    local acc = div(p.BN, 16) * tm * div(256, t.wave_size)
    if chunks + acc + 32 > 192 then return false, "registers would limit occupancy" end
    -- A 32-token block re-reads nothing (the weights are read once per token block): it only pays
    -- when each weight tile meets enough tokens, so keep it to the wider weight tiles.
    if p.BM == 32 and p.BN == 16 then return false, "32 tokens against one weight tile" end
    -- Splitting K buys blocks for the mid-size decode shapes, whose N / 16 tiles leave SMs with
    -- uneven shares; a wide or tall tile already has too few blocks to split usefully.
    if p.SK > 1 and (p.BM > 16 or p.BN > 32) then return false, "split-K with a wide tile" end
    -- Stream-K gives every compute unit the same weight bytes whatever N / BN is (a ragged last
    -- wave of tiles is what it removes); a 32-token tile is a prefill shape, where it is not needed.
    if p.SK == 0 and p.BM > 16 then return false, "stream-K with 32 tokens" end
    -- stream-K launches two blocks a compute unit (runtime/gemm_geometry.h): both must fit
    if p.SK == 0 and p.WM * t.wave_size > 256 then return false, "stream-K block too big for two a unit" end
    return true
  end,
}
