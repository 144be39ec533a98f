-- rmsnorm_add.lua: the variant space of templates/norm/rmsnorm_add.hip, vLLM's fused add +
-- RMSNorm (op rmsnorm_add, ABI templates/abi/rmsnorm.h, descriptor runtime/op_rmsnorm.c).
-- Axes as the template reads them: RB rows a block, VW elements a load (8: 16 bytes, 4: 8 bytes),
-- TH threads a block (G = TH/RB a row), UN packs of VW a thread holds in registers, so a row of
-- up to G*VW*UN elements is read once; a longer one re-reads its residual (still correct).

local function div(a, b) return math.floor(a / b) end

return {
  family = "norm",
  template = "rmsnorm_add.hip",
  kernel = "kt_rmsnorm_add",
  ops = { "rmsnorm_add" },
  axes = {
    { "dtype", { "bf16", "fp16" } },
    { "RB", { 1, 2, 4 } },
    { "VW", { 8, 4 } },
    { "TH", { 64, 128, 256, 512, 1024 } },
    { "UN", { 1, 2, 4 } },
  },

  threads = function(p, t) return p.TH end,

  -- one fp32 partial a wave of every row that spans several waves (none when a row is one wave
  -- or part of one: the shuffles finish it); the array is never smaller than RB floats
  lds_bytes = function(p, t)
    local g = div(p.TH, p.RB)
    local waves = g > t.wave_size and div(g, t.wave_size) or 1
    return 4 * p.RB * waves
  end,

  constraint = function(p, t)
    local g = div(p.TH, p.RB)
    if g < 32 then return false, "fewer than 32 threads a row" end
    -- VW = 4 is for rows whose hidden is a multiple of 4 and not of 8: one row a block is enough
    if p.VW == 4 and p.RB > 1 then return false, "VW 4 only with one row a block" end
    -- register capacity of a row: below 1024 elements even the smallest model re-reads, above
    -- 16384 the registers hold more than any served hidden size needs
    local cap = g * p.VW * p.UN
    if cap < 1024 then return false, "holds fewer than 1024 elements a row" end
    if cap > 16384 then return false, "holds more than 16384 elements a row" end
    -- Registers a lane: the x, residual and weight packs in flight (VW/2 words each, UN of
    -- each), ~32 for addresses, the scale and loop state. What a lane may have at this block
    -- size: NVIDIA 64K registers an SM over TH threads; AMD, the workgroup's waves spread over
    -- the 4 SIMDs of a CU (CDNA) or WGP (RDNA), each SIMD lane's register file shared by them.
    local regs = 3 * p.UN * div(p.VW, 2) + 32
    local limit = t.max_regs_per_thread
    if t.vendor == "nvidia" then
      -- and 64: without a register flag, ptxas (CUDA 13.0) keeps these kernels to 64 registers
      -- whatever the block size and spills past it (VW 8 x UN 4 spilled 16 bytes at 64; given
      -- 128 it took 74); 1024-thread blocks it keeps to 32 (two blocks an SM), and RB 2 UN 1
      -- spilled there. (On the H200 1024-thread rows were the slowest at every measured shape.)
      limit = math.min(limit, div(t.regs_per_simd, p.TH), p.TH >= 1024 and 32 or 64)
    else
      local waves_per_simd = math.max(1, div(div(p.TH, t.wave_size) + 3, 4))
      limit = math.min(limit, div(t.regs_per_simd, waves_per_simd))
    end
    if regs > limit then return false, "registers would not fit the block size" end
    return true
  end,
}
