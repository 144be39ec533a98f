-- dense.lua: the variant space of templates/gemm/dense.hip (C = A . W^T, bf16/fp16, fp32 accumulate).
-- Axis order fixes the enumeration order and the kernel names (kt_gemm_dense_bf16_bm64_..._sk1).
-- The constraints only throw out variants that cannot work or cannot win; whether a survivor
-- spills is read from its code object afterwards, so the register rule errs on the admitting side.

local PAD = 8          -- LDS row padding in elements (dense.hip: kLd = BK + 8)
local MAX_THREADS = 256 -- per workgroup: more only adds barrier cost for tiles up to 128x128

local function div(a, b) return math.floor(a / b) end

-- Per-lane 32-bit registers one 16x16 fragment takes: fp32 accumulator, and a 16-bit A or B
-- operand. (RDNA3 replicates A/B across the half-waves, 8 registers an operand, but the compiler
-- keeps fewer of them live at once: compiled, gfx1100 needs no more than gfx1201.)
local function acc_regs(t) return div(256, t.wave_size) end
local function operand_regs(t) return div(128, t.wave_size) end

-- LDS fragment reads per MMA of a wave owning fm x fn fragments (the seed's measured rule:
-- square wave tiles read the fewest, slivers the most).
local function reads_per_mma(fm, fn) return (fm + fn) / (fm * fn) end

-- Among the wave grids with the same number of waves that divide the tile, is (wm, wn) the
-- one with the fewest reads per MMA (ties: more waves along N, the long side of LLM weights)?
local function squarest(bm, bn, wm, wn)
  local best, bwm = nil, nil
  for _, m in ipairs({ 1, 2, 4, 8 }) do
    local n = div(wm * wn, m)
    if m * n == wm * wn and bm % (16 * m) == 0 and bn % (16 * n) == 0 then
      local c = reads_per_mma(div(bm, 16 * m), div(bn, 16 * n))
      if best == nil or c < best - 1e-9 or (math.abs(c - best) < 1e-9 and m < bwm) then
        best, bwm = c, m
      end
    end
  end
  return bwm == wm
end

local function lds_bytes(p, t) return (p.BM + p.BN) * (p.BK + PAD) * 2 end

return {
  template = "dense.hip",
  law = "dense",
  kernel = "kt_gemm_dense",
  ops = { "gemm" },
  axes = {
    { "dtype", { "bf16", "fp16" } },
    { "BM", { 16, 32, 64, 128 } },
    { "BN", { 32, 64, 128 } },
    { "BK", { 32, 64 } },
    { "WM", { 1, 2, 4 } },
    { "WN", { 1, 2, 4 } },
    { "SK", { 1, 2, 4, 8, 16, 32 } },
  },

  threads = function(p, t) return p.WM * p.WN * t.wave_size end,

  lds_bytes = lds_bytes,

  constraint = function(p, t)
    if p.BM % (16 * p.WM) ~= 0 or p.BN % (16 * p.WN) ~= 0 then
      return false, "tile not divisible by waves"
    end
    if p.WM * p.WN * t.wave_size > MAX_THREADS then return false, "too many threads" end
    if lds_bytes(p, t) > t.lds_per_workgroup then return false, "lds over target limit" end
    local fm, fn = div(p.BM, 16 * p.WM), div(p.BN, 16 * p.WN)
    -- A wave reads fm + fn fragments per fm * fn MMAs: below 4 fragments a wave (2x2, 1x4) it
    -- reads at least one per MMA, so more waves only split the work thinner (a tile of fewer
    -- than 4 fragments takes one wave). For a given wave count only the squarest grid is kept.
    if fm * fn < math.min(4, div(p.BM * p.BN, 256)) then return false, "wave tile too small" end
    -- More than 64x64 a wave: 128+ accumulator registers a lane on wave32, and on wave64 a tile
    -- that few waves can neither hide latency nor fill the machine.
    if fm * fn > 16 then return false, "wave tile too big" end
    if not squarest(p.BM, p.BN, p.WM, p.WN) then return false, "wave grid not the squarest" end
    -- Split-K buys workgroups when M is small; with a tall tile the partials traffic
    -- (SK * M * N floats written and read back) costs more than the parallelism it adds.
    -- At decode M a 16-row tile may split 32 ways: at M = 1, N = 1536 that is what it takes to
    -- have ~12 blocks' loads in flight per H200 SM (Little's law at ~4 TB/s), and the partials
    -- are 32 * N floats against N * K weights.
    local max_split_rows = p.BM == 16 and 512 or 128
    if p.SK > 1 and p.SK * p.BM > max_split_rows then return false, "split-k with a tall tile" end
    -- Registers per lane: accumulators, operand fragments for the whole unrolled BK step (the
    -- compiler hoists them), the next tile's prefetch (16-byte chunks), and ~32 for addresses
    -- and loop state. On CDNA the accumulators may live in AGPRs, the rest in arch VGPRs.
    -- Checked against every candidate compiled with clang-19 and nvcc 13.0: nothing it admits
    -- spills on the AMD targets (two sm_90a variants spill 4 bytes, a ptxas occupancy choice).
    local threads = p.WM * p.WN * t.wave_size
    local acc = fm * fn * acc_regs(t)
    local rest = (fm + fn) * operand_regs(t) * div(p.BK, 16)
               + div((p.BM + p.BN) * p.BK * 2, threads * 4) + 32
    local arch_limit = math.min(t.max_regs_per_thread, 256)
    if t.max_regs_per_thread > 256 then                     -- AGPRs: a second 256-entry file
      if acc > 256 or rest > arch_limit then return false, "registers would spill" end
    elseif acc + rest > arch_limit then
      return false, "registers would spill"
    end
    return true
  end,
}
