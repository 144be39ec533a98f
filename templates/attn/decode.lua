-- decode.lua: the variant space of templates/attn/decode.hip, paged decode and speculative
-- verify with split-KV (op attn_decode, ABI templates/abi/attn.h, descriptor runtime/op_attn.c).
-- Axes as the template reads them: D head size, MT 16-row M tiles a block (the GQA group's heads
-- times the query rows; more rows take more blocks), BN keys a KV tile, NW warps, SEGMAX the most
-- split-KV segments the runtime may give it (its scratch ceiling; the law picks the count), RE 1
-- to keep Q's fragments in registers (offered at 8 warps, always at 128 threads), KD 1 to read K
-- from the cache straight into the score's fragments (no LDS; with RE 1 only, one key tile x d
-- range a warp, every warp), ST the KV tiles a ring in LDS holds (1: no ring, the next tile in
-- flight in registers; 2 to 6: copied global -> LDS with no registers held, ST - 1 tiles ahead;
-- targets with such a copy only, KD 0), PD 1 where the reduce waits for the main kernel itself (so
-- the runtime may launch it early; the axis tells such a kernel from one built before), OB the
-- blocks a compute unit must hold, which caps the registers (arch/attn_ops.h KT_ATTN_KERNEL), PF 1
-- for the KD form's L2 prefetch of the next-but-one tile (NVIDIA; the law's pick where the grid
-- leaves the block slots half empty and the segments stream), F8 1 for S in the target's e4m3
-- matrix instruction with K as the fp8 cache holds it. Two warps a block are not offered: on
-- gfx1201 most of them spilled (every O tile on half the lanes). All of a block's LDS is given at
-- launch.

local function div(a, b) return math.floor(a / b) end
local PAD = 8
local REGS_BASE = 64

-- what decode.hip's LDS holds: kt_smem (Q, the K / V tile [key][d] unless a 16-bit ring serves
-- it, the score slabs (one a d range the score tiles split over), P, row statistics), 16-byte
-- aligned, then the ring: ST stages of K and V rows as the cache stores them, 16 bytes past d
-- the prelude's direct-fragment span (k a lane pair's chunks cover): 16 on RDNA's WMMA, else 32
local function direct_span(t) return t.mma:find("^wmma") and 16 or 32 end
-- KD: warps over (key tile, d range); the ranges a head splits into
local function kd_split(p, t)
  local want = math.max(1, div(p.NW, div(p.BN, 16)))
  return math.min(want, div(p.D, direct_span(t)))
end
local function ksplit(p, t)
  if p.KD == 1 then return kd_split(p, t) end
  local want = div(p.NW, p.MT * div(p.BN, 16))
  return math.max(1, math.min(want, div(p.D, 16)))
end
local function esize(p) return p.dtype:find("e4m3") and 1 or 2 end
local function smem_bytes(p, t)
  local m = 16 * p.MT
  local q = p.KD == 1 and 16 or m * (p.D + PAD) * 2
  -- a ring's stage is the tile S and P V read: rings are NVIDIA's, where fp8 stages are read raw (KR)
  local kv = p.ST == 1 and p.BN * (p.D + PAD) * 2 or 16
  local base = q + kv + ksplit(p, t) * m * (p.BN + 8) * 4 + m * (p.BN + PAD) * 2 + 3 * m * 4
  base = div(base + 15, 16) * 16
  if p.ST == 1 then return base end
  return base + p.ST * 2 * p.BN * (p.D * esize(p) + 16)
end

return {
  family = "attn",
  template = "decode.hip",
  kernel = "kt_attn_decode",
  ops = { "attn_decode" },
  axes = {
    { "dtype", { "bf16", "fp16", "bf16_e4m3", "fp16_e4m3" } },
    { "D", { 64, 128, 256, 512 } },
    { "MT", { 1, 2, 4 } },
    { "BN", { 16, 32, 64 } },
    { "NW", { 4, 8 } },
    { "SEGMAX", { 128, 256 } },
    { "RE", { 0, 1 } },
    { "KD", { 0, 1 } },
    { "ST", { 1, 2, 3, 4, 6 } },
    { "PD", { 1 } },
    { "OB", { 0, 2, 3, 4 } },
    { "PF", { 0, 1 } },
    { "F8", { 0, 1 } },
  },

  lds_at_launch = true,

  threads = function(p, t) return p.NW * t.wave_size end,

  lds_bytes = function(p, t) return smem_bytes(p, t) end,

  constraint = function(p, t)
    local threads = p.NW * t.wave_size
    local chunk = p.dtype:find("e4m3") and 16 or 8        -- cache elements a 16-byte load brings
    local per_key = div(p.D, chunk)
    if threads % per_key ~= 0 or p.BN % div(threads, per_key) ~= 0 then
      return false, "the KV tile does not split into whole keys a thread"
    end
    local keys = div(p.BN, div(threads, per_key))           -- keys (K and V chunks) a thread loads
    local otiles = p.MT * div(p.D, 16)
    if otiles % p.NW ~= 0 then return false, "output tiles do not split over the warps" end
    if p.KD == 1 then
      if p.RE ~= 1 then return false, "KD holds Q in registers: RE 1 only" end
      local nt = div(p.BN, 16)
      if nt > p.NW or nt * kd_split(p, t) ~= p.NW then
        return false, "KD: not one key tile x d range a warp for every warp"
      end
    end
    if p.PF == 1 then
      -- a tile more in flight for a latency-bound block: only the batch-1 form the law takes it for
      if p.KD ~= 1 or p.MT ~= 1 then return false, "PF: the KD form at MT 1 only" end
      if p.dtype:find("e4m3") then return false, "PF: 16-bit caches only (untimed with fp8)" end
      -- an L2 prefetch instruction: NVIDIA's (arch/attn_ops.h); on AMD the twin would be its PF 0
      if t.vendor ~= "nvidia" then return false, "PF: no L2 prefetch on this target" end
    end
    if p.F8 == 1 then
      if p.dtype ~= "bf16_e4m3" then return false, "F8: a bf16 query over an fp8 cache only" end
      if p.KD == 1 or p.ST > 1 then return false, "F8: the register form (KD 0, ST 1) only" end
      -- gfx12's fp8 WMMA is native (the KV loop's instructions -29% at d256 BN32 NW4, ISA counts);
      -- sm_90's mma.sync e4m3 is software (f16 conversions and the f16 instruction: the sweep
      -- passes it over there, and the H200 checks the template's arithmetic); gfx942's takes
      -- FNUZ e4m3, gfx11 has none
      if t.mma ~= "mma-sync" and t.mma ~= "wmma-gfx12" then
        return false, "F8: no OCP e4m3 matrix instruction on this target"
      end
    end
    if p.ST > 1 then
      if t.vendor ~= "nvidia" then
        return false, "no global -> LDS copy on this target: the register stage (ST 1) serves it"
      end
      if p.KD == 1 then return false, "KD reads K into registers: no ring" end
      if p.RE ~= 1 then return false, "a ring frees the registers RE 0 saves" end
      if p.D > 256 then return false, "a ring stage of d 512 leaves no second block a unit" end
      -- a block alone stalls at each barrier with its copies: a ring streams at two blocks a unit
      if 2 * smem_bytes(p, t) > t.lds_at_launch_max then return false, "a ring's LDS leaves no second block a unit" end
    elseif smem_bytes(p, t) > t.lds_per_workgroup then
      -- the register form keeps to the LDS a launch gets unasked (48 KiB on NVIDIA): what it
      -- holds in flight is in registers, and its sweeps never wanted more (fp8 at d256 BN64 NW4,
      -- 49.3 KB, 190 registers: 8% slower than BN32 at 48 KB a unit, fourteenth session)
      return false, "LDS over the workgroup's"
    end
    if smem_bytes(p, t) > t.lds_at_launch_max then return false, "LDS over the workgroup's" end
    -- segment ceilings: 256 below d256 (the seed's argmin at d128 batch 1 deep); from d256 the
    -- seed's 128 (s256 never won there on RDNA) and 256 again. On the H200, 256 lost at 6/1/256
    -- batch 1 32K (68 us against 47) while the reduce was one block a row; the column-sliced
    -- reduce took that row from 47 to 25 us, and 256 halves each block's tiles
    if p.D < 256 and p.SEGMAX ~= 256 then return false, "not this head size's segment ceiling" end
    -- at 128 threads or fewer the registers are there (the H200's 4-warp winners all kept them)
    if p.RE == 0 and threads <= 128 then return false, "128 threads keep Q and P in registers" end
    -- registers a lane: the O accumulators (16x16 fp32 tiles over the wave), the K and V chunks in
    -- flight (4 words each) and their pages and slots (two sets around the V issue), plus the
    -- fragments, softmax columns and addresses (REGS_BASE, read off the ELF counts)
    local acc = div(otiles, p.NW) * div(256, t.wave_size)
    local regs = acc + 8 * keys + 4 * keys + REGS_BASE + (p.RE == 1 and 16 or 0)
    -- a ring holds no chunk in flight: a key's page (fp8 stages are read raw, as 16-bit ones)
    if p.ST > 1 then regs = acc + keys + REGS_BASE + (p.RE == 1 and 16 or 0) end
    if p.KD == 1 then
      -- V's chunks and pages alone through LDS; K's chunks (half the words for fp8) and every M
      -- tile's Q fragments over the warp's d range (16 x range halves over the wave) and scores
      local range = div(p.D, kd_split(p, t))
      local kwords = div(16 * range * 2, 4 * t.wave_size)
      if p.dtype:find("e4m3") then kwords = div(kwords, 2) end
      if t.mma == "wmma-gfx11" then kwords = 2 * kwords end     -- replicated operands
      local qwords = p.MT * div(16 * range * 2, 4 * t.wave_size) * (t.mma == "wmma-gfx11" and 2 or 1)
      regs = acc + 4 * keys + 2 * keys + kwords + qwords + p.MT * div(256, t.wave_size) + REGS_BASE
    end
    local limit = t.max_regs_per_thread
    if t.vendor == "nvidia" then limit = math.min(limit, div(65536, threads)) end
    if regs > limit then return false, "registers over the lane's" end
    return t.occupancy_fits(threads, p.OB, smem_bytes(p, t), regs)
  end,
}
