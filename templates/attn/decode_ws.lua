-- decode_ws.lua: the variant space of templates/attn/decode_ws.hip (op attn_decode, as decode.lua):
-- keys split over the warps, one 16-row tile of rows a block. Axes as the template reads them: D,
-- MT (1 only), BN keys a warp's tile, NW warps (a round is NW tiles), SEGMAX, QL (Q re-read from
-- LDS each tile), ST (ring stages on NVIDIA, cp.async; 1 on AMD: the next round in registers), PD
-- (as decode.lua: 1, the reduce waits for the main kernel itself).
-- WS 1 names the form for the law (runtime/op_attn.c). An fp8 cache's stages hold its raw bytes on
-- NVIDIA (KR: d + 16 bytes a row), 16-bit elements converted from it elsewhere.

local function div(a, b) return math.floor(a / b) end
local PAD = 8
local REGS_BASE = 48

local function fp8(p) return p.dtype:find("e4m3") ~= nil end
-- a stage's row in bytes: KR's raw fp8 row (NVIDIA: e4m3 -> f16 is one instruction), else 16-bit
local function row_bytes(p, t)
  if fp8(p) and t.vendor == "nvidia" then return p.D + 16 end
  return (p.D + PAD) * 2
end

-- Q's 16 rows, then the stages (or the warps' O and (m, l) for the merge, whichever is larger)
local function smem_bytes(p, t)
  local q = 16 * (p.D + PAD) * 2
  local stage = 2 * p.NW * p.BN * row_bytes(p, t)
  local merge = p.NW * 16 * (p.D + 2) * 4
  return q + math.max(p.ST * stage, merge)
end

return {
  family = "attn",
  template = "decode_ws.hip",
  kernel = "kt_attn_decode_ws",
  ops = { "attn_decode" },
  law = "decode",
  axes = {
    { "dtype", { "bf16", "fp16", "bf16_e4m3", "fp16_e4m3" } },
    { "D", { 64, 128, 256, 512 } },
    { "MT", { 1 } },
    { "BN", { 16, 32, 64 } },
    { "NW", { 2, 4, 8 } },
    { "SEGMAX", { 128, 256 } },
    { "QL", { 0, 1 } },
    { "ST", { 1, 2, 3 } },
    { "WS", { 1 } },
    { "PD", { 1 } },
  },

  lds_at_launch = true,

  threads = function(p, t) return p.NW * t.wave_size end,

  lds_bytes = function(p, t) return smem_bytes(p, t) end,

  constraint = function(p, t)
    local threads = p.NW * t.wave_size
    local per_key = div(p.D, fp8(p) and 16 or 8)             -- 16-byte loads a key's row takes
    if threads % per_key ~= 0 or (p.NW * p.BN) % div(threads, per_key) ~= 0 then
      return false, "the round does not split into whole keys a thread"
    end
    local keys = div(p.NW * p.BN, div(threads, per_key))    -- keys (K and V chunks) a thread loads
    if t.vendor == "nvidia" then
      if p.ST == 1 then return false, "NVIDIA copies the rounds into a ring (ST 2, 3)" end
    elseif p.ST ~= 1 then
      return false, "no global -> LDS copy on this target: the next round in registers (ST 1)"
    end
    if p.D < 256 and p.SEGMAX ~= 256 then return false, "not this head size's segment ceiling" end
    if smem_bytes(p, t) > t.lds_at_launch_max then return false, "LDS over the workgroup's" end
    -- registers a lane: O (16 x d fp32 over the wave), S and P for the warp's tile, Q's fragments
    -- (QL 0), a round's chunks in flight without a ring (4 words a K and a V chunk), pages
    local acc, afrag = div(256, t.wave_size), div(128, t.wave_size)
    local dt, nt = div(p.D, 16), div(p.BN, 16)
    if t.mma == "wmma-gfx11" then afrag = 2 * afrag end          -- replicated operands
    local regs = dt * acc + nt * (acc + afrag) + (p.QL == 0 and dt * afrag or afrag) + keys + REGS_BASE
    if p.ST == 1 then regs = regs + 8 * keys end
    local limit = t.max_regs_per_thread
    if t.vendor == "nvidia" then limit = math.min(limit, div(65536, threads)) end
    if regs > limit then return false, "registers over the lane's" end
    return true
  end,
}
