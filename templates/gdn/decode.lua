-- decode.lua: the variant space of templates/gdn/decode.hip, one fused gated delta-net layer step
-- (op gdn_decode, ABI templates/abi/gdn.h, descriptor runtime/op_gdn.c). Axes as the template
-- reads them: VK the state layout (0 [.., K, V], 1 K-last), DK and DV the head sizes, BV the value
-- columns a block owns (under the gated norm, BV < DV splits a head over blocks), NW warps, KPT
-- state rows a thread holds; a thread holds KPT x VPT of the block's DK x BV fp32 state, VPT = BV *
-- KPT / (DK's share of the threads); MT the tokens a sequence it steps at most (1: plain decode);
-- OB the blocks ptxas must keep resident on an SM (0: its choice); PS a persistent grid of PS blocks a
-- compute unit stepping the work items in turn, the next item's state copied into LDS meanwhile
-- (0: a block an item); PF 1 a block prefetches into L2 the state of the block the device starts
-- when it ends (OB forms without PS, NVIDIA: AMD's targets have no L2-only prefetch).

local function div(a, b) return math.floor(a / b) end
local MAX_T, MAX_KW = 8, 4

local function layout(p, t)
  local threads = p.NW * t.wave_size
  local ti = div(p.DK, p.KPT)
  if p.DK % p.KPT ~= 0 or threads % ti ~= 0 then return nil end
  local tj = div(threads, ti)
  if p.BV % tj ~= 0 then return nil end
  return ti, tj, div(p.BV, tj)
end

-- kt_gdn_smem: the step's conv outputs (q, k, v columns, MT tokens), the replayed k (MAX_T), the
-- q/k channels' inputs (2-byte, MAX_KW - 1 + MT a channel, rounded to 4 bytes), the replayed log
-- entries (two floats a column a token), six per-token scalars and the replayed k's norms, the
-- row sums' partials (two parities, two sums) and the token's k.k, q.q, k.q beside them (OB 0),
-- the norm's wave sums, the split norm's wave sums a token (BV < DV), the writer and last flags
local function smem_bytes(p, t)
  local ti, tj = layout(p, t)
  local threads = p.NW * t.wave_size
  local parts
  if p.VK == 1 then parts = ti > t.wave_size and div(ti, t.wave_size) or 1
  else parts = tj < t.wave_size and p.NW or ti end
  local eqk = 4 * math.ceil(2 * p.DK * (MAX_KW - 1 + p.MT) * 2 / 4)
  local nsq = p.BV < p.DV and div(p.DV, t.wave_size) or 1
  local red3 = p.OB == 0 and parts or 1
  return eqk + 4 * (p.MT * (2 * p.DK + p.BV) + MAX_T * p.DK + MAX_T * 2 * p.BV + 6 * p.MT + MAX_T
                    + 2 * 2 * parts * p.BV + 2 * red3 * 4 + 2 * p.NW + p.MT * nsq + 2)
end

-- PS: the state buffer, given at launch
local function buf_bytes(p) return p.PS > 0 and 4 * p.DK * p.BV or 0 end

return {
  family = "gdn",
  template = "decode.hip",
  kernel = "kt_gdn_decode",
  ops = { "gdn_decode" },
  axes = {
    { "dtype", { "bf16", "fp16" } },
    { "VK", { 0, 1 } },
    { "DK", { 128 } },
    { "DV", { 128 } },
    { "BV", { 32, 64, 128 } },
    { "NW", { 2, 4, 8, 16 } },
    { "KPT", { 4, 8, 16, 32 } },
    { "MT", { 1, 8 } },
    { "OB", { 0, 2 } },
    { "PS", { 0, 2 } },
    { "PF", { 0, 1 } },
  },

  threads = function(p, t) return p.NW * t.wave_size end,

  lds_bytes = function(p, t)
    if not layout(p, t) then return 0 end
    return smem_bytes(p, t) + buf_bytes(p)
  end,

  constraint = function(p, t)
    local ti, tj, vpt = layout(p, t)
    if not ti then return false, "the threads do not tile DK x BV" end
    if p.DV % p.BV ~= 0 then return false, "BV does not divide DV" end
    -- a head split over blocks: its last block sums a token's dv outputs of the norm by whole waves
    if p.BV < p.DV and p.DV % t.wave_size ~= 0 then return false, "BV < DV: DV not a multiple of the wave" end
    -- the state moves in 16-byte pieces along its contiguous axis: 4 floats a thread there
    if p.VK == 0 and vpt % 4 ~= 0 then return false, "VK 0: fewer than 4 columns a thread" end
    if p.VK == 1 and p.KPT % 4 ~= 0 then return false, "VK 1: fewer than 4 rows a thread" end
    -- K-last KPT 32 at one token and 8 warps ran 1.3-2.0x its KPT 16 twin at every batch (the H100's
    -- sweep, call G of the thirty-sixth session; as many state floats a thread), unexplained by its
    -- footprint; its MT 8 twins and the other warp counts stay within 0.94-1.11x and are offered
    if p.VK == 1 and p.KPT == 32 and p.MT == 1 and p.NW == 8 then return false, "VK 1: KPT 32 at MT 1 and NW 8 (measured 1.3-2.0x KPT 16)" end
    -- the state piece lives in registers beside ~40 of the kernel's own: at most 64 floats
    -- (128 spilled on sm_90a's 255 with the conv's arrays live)
    if p.KPT * vpt > 64 then return false, "more than 64 state floats a thread" end
    if p.KPT * vpt < 8 then return false, "fewer than 8 state floats a thread: the block's state is too thin" end
    if p.NW * t.wave_size < MAX_T then return false, "fewer threads than tokens" end
    -- PS: a grid of PS blocks a unit steps the items; the one-item-a-block forms serve the small
    -- grids, and a persistent form is only worth its LDS where OB holds its blocks resident
    -- (and only where global -> LDS copies hold no registers: sm_80 on; gfx11 / gfx12 have none, and
    -- without the copy the loop only delays each item's state load)
    if p.PS > 0 and t.vendor ~= "nvidia" then return false, "PS: no global -> LDS copy on this target" end
    if p.PS > 0 and p.OB ~= p.PS then return false, "PS without OB = PS: its blocks' residency unasked" end
    -- PF: the block `ahead` on is known only where OB fixes the blocks a unit holds, and the step is
    -- one block an item (PS 0); the twin without it stays (the prefetch's registers spill some forms)
    if p.PF == 1 and (p.OB == 0 or p.PS > 0) then return false, "PF: only OB forms without PS" end
    if p.PF == 1 and t.vendor ~= "nvidia" then return false, "PF: no L2-only prefetch on this target" end
    -- NW 16: a whole head in one block for the small grids (no split norm's hand-off, the conv in
    -- one channel round); a latency form, so never a split head, a bound residency or a loop
    if p.NW == 16 and (p.BV < p.DV or p.OB > 0 or p.PS > 0) then return false, "NW 16: the whole-head form only (BV = DV, OB 0, PS 0)" end
    -- (and 512 threads: wave 64's 1,024-thread blocks are neither emulated nor measured), in the
    -- K-last layout vLLM serves, the only one where it was measured to win (batch 8, call E1) and
    -- the only one sm_90a fits (VK 0's 16 row partials a column: 49 KB of LDS)
    if p.NW == 16 and t.wave_size > 32 then return false, "NW 16: wave 32 targets only" end
    if p.NW == 16 and p.VK == 0 then return false, "NW 16: the K-last layout only" end
    if smem_bytes(p, t) > t.lds_per_workgroup then return false, "LDS over the target's limit" end
    if smem_bytes(p, t) + buf_bytes(p) > t.lds_at_launch_max then return false, "PS: the state buffer over the target's LDS" end
    -- registers: the state piece about twice over (its decayed copy and the products' operands,
    -- as ptxas allocated the first builds: 64 floats ~210 at MT 8), and each channel round's conv
    -- inputs and taps; OB is offered where it binds and is not a sure spill (gen/recipe.c)
    local rounds = math.ceil((2 * p.DK + p.BV) / (p.NW * t.wave_size))
    local regs = 2 * p.KPT * vpt + rounds * (MAX_KW - 1 + p.MT + MAX_KW)
    return t.occupancy_fits(p.NW * t.wave_size, p.OB, smem_bytes(p, t) + buf_bytes(p), regs)
  end,
}
