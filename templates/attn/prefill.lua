-- prefill.lua: the variant space of templates/attn/prefill.hip, causal varlen paged prefill
-- (chunked prefill included; op attn_prefill, ABI templates/abi/attn.h, descriptor
-- runtime/op_attn_prefill.c). Axes as the template reads them: D head size, BM rows a block (the
-- GQA group folded into M: query tokens x the group's heads), BN keys a KV tile, NW warps, WD warps
-- sharing a row group, each owning a d-slice of D / WD columns (of Q's k and O's n: S's partial
-- sums meet in LDS), so a warp owns BM * WD / NW rows, whole 16-row tiles. WD > 1 is what lets
-- d256 exist at all (no warp holds 16 rows x 256 of Q and O), and at d128 it gives a warp two
-- 16-row tiles (each K / V fragment read from LDS serves both) within the registers, at the cost
-- of the slabs' LDS and one more barrier a tile. QL 1 keeps Q in LDS and reads its fragments
-- each tile instead of holding them: what lets a warp own two 16-row tiles at d128 without
-- d-slices (each K / V fragment read from LDS then serves 32 rows, FlashAttention-2's shape). K
-- and V each have a tile buffer; on NVIDIA 16-bit caches copy straight into them (cp.async), so no
-- register holds a tile in flight, and ST > 1 makes those buffers a ring of ST stages whose copies
-- are issued ST - 1 tiles ahead (one barrier a tile). SEGMAX is the most split-KV segments a launch may be given
-- (block z a segment; a second launch, <kernel>_reduce, merges their partials as decode's do).
-- PD 1: that reduce waits for the main kernel itself, so the runtime may launch it early (the
-- axis tells a kernel built so from one built before, which must run in plain stream order).
-- The same kernels serve attn_decode where a kv head has many rows (speculative verify: g x q
-- rows, a 16-row tile a warp, K and V read once a block): ops lists both.

local function div(a, b) return math.floor(a / b) end
local PAD = 8

-- what prefill.hip's LDS holds, all of it taken at launch: ST stages of a K tile and a V tile
-- ([key][d]), WD > 1's fp32 slabs of partial scores (pitch BN + 4), and Q ([row][d]): its own
-- region with QL 1, else a stage over the last ring stage (ST 1: V's tile) and the slabs (read
-- into registers before any copy reaches them)
local function smem_bytes(p)
  local q = p.BM * (p.D + PAD) * 2
  local stage = 2 * p.BN * (p.D + PAD) * 2
  local slabs = p.WD > 1 and p.WD * p.BM * (p.BN + 4) * 4 or 0
  local region = p.ST * stage + slabs
  if p.QL == 1 then return region + q end
  local qoff = p.ST > 1 and (p.ST - 1) * stage or stage / 2
  return qoff + math.max(q, region - qoff)
end

return {
  family = "attn",
  template = "prefill.hip",
  kernel = "kt_attn_prefill",
  ops = { "attn_prefill", "attn_decode" },
  axes = {
    { "dtype", { "bf16", "fp16", "bf16_e4m3", "fp16_e4m3" } },
    { "D", { 64, 128, 256, 512 } },
    { "BM", { 64, 128 } },
    { "BN", { 32, 64 } },
    { "NW", { 4, 8 } },
    { "WD", { 1, 2, 4 } },
    { "QL", { 0, 1 } },
    { "ST", { 1, 2, 3 } },
    { "SEGMAX", { 128 } },
    { "PD", { 1 } },
    { "OB", { 0, 2, 3, 4 } },
  },

  lds_at_launch = true,

  threads = function(p, t) return p.NW * t.wave_size end,

  lds_bytes = function(p, t) return smem_bytes(p) end,

  constraint = function(p, t)
    local threads = p.NW * t.wave_size
    local chunk = p.dtype:find("e4m3") and 16 or 8        -- cache elements a 16-byte load brings
    local per_key = div(p.D, chunk)                         -- 16-byte pieces a key's row takes
    -- NVIDIA's 16-bit caches copy straight to LDS (cp.async), a thread taking several pieces of
    -- one key (8 threads a row); elsewhere the pieces are staged in registers, one a key a thread
    local direct = t.vendor == "nvidia" and chunk == 8
    local tk = (direct and per_key > 8) and 8 or per_key    -- threads sharing a key's row
    if threads % tk ~= 0 or per_key % tk ~= 0 or p.BN % div(threads, tk) ~= 0 then
      return false, "the KV tile does not split into whole keys a thread"
    end
    local keys = div(p.BN, div(threads, tk))                -- keys (K or V) a thread loads a tile
    if p.NW % p.WD ~= 0 or div(p.D, 16) % p.WD ~= 0 then return false, "d-slices of whole warps and whole 16-wide tiles" end
    local wr = div(p.NW, p.WD)                              -- row groups
    if p.BM % (16 * wr) ~= 0 then return false, "rows do not split into whole 16-row tiles a warp" end
    -- past two 16-row tiles a warp the registers grow faster than the K / V fragment reads
    -- shrink (the slabs' LDS traffic is per row), and clang 19 crashed compiling BM128 NW4 WD2
    -- (4 tiles a warp) for gfx942
    if div(p.BM, 16 * wr) > 2 then return false, "over two 16-row tiles a warp" end
    -- a d-slice narrower than 64 columns spends more on the slabs than it saves in registers
    if p.WD > 1 and div(p.D, p.WD) < 64 then return false, "d-slices under 64 columns" end
    -- a ring's copies hold no registers: only where the cache's bytes go straight to LDS
    if p.ST > 1 and not direct then return false, "no global -> LDS copy of this cache here: one tile buffer each (ST 1)" end
    -- three stages only of the smaller tile: 64-key stages leave no second block a unit at d 256
    if p.ST > 2 and p.BN > 32 then return false, "three stages of 64-key tiles: LDS for one block a unit" end
    if smem_bytes(p) > t.lds_at_launch_max then return false, "LDS over the workgroup's" end
    -- registers a lane, all held across the KV loop: Q's A fragments of the warp's d-slice (8
    -- halves a lane on wave32, 4 on wave64; QL 1: two at a time), the O slice and S accumulators
    -- (16x16 fp32 over the wave; P's fragments replace S's), one K or V tile's chunks in flight
    -- (4 words each; none where the copy goes straight to LDS) and their keys' pages (a word
    -- each), plus ~40 for row statistics and addresses. A filter, not the truth: the compile's
    -- spill count decides (gfx11's replicated operands need twice Q's)
    local mw = div(p.BM, 16 * wr)
    local afrag, acc = div(128, t.wave_size), div(256, t.wave_size)
    local dtiles = div(p.D, 16 * p.WD)
    local q = p.QL == 1 and 2 * afrag or mw * dtiles * afrag
    local regs = q + mw * dtiles * acc + mw * div(p.BN, 16) * acc + (direct and 0 or 4 * keys) + keys + 40
    local limit = t.max_regs_per_thread
    if t.vendor == "nvidia" then limit = math.min(limit, div(65536, threads)) end
    if regs > limit then return false, "registers over the lane's (Q, O and S held across the KV loop)" end
    return t.occupancy_fits(threads, p.OB, smem_bytes(p), regs)
  end,
}
