-- prefill.lua: the variant space of templates/gdn/prefill.hip, the gated delta-net prefill in its
-- chunked form (op gdn_prefill, ABI templates/abi/gdn_prefill.h, descriptor
-- runtime/op_gdn_prefill.c). Axes as the template reads them: BT the chunk, VK the state layout,
-- DK and DV the head sizes, BV the value columns of a state-pass block, NW its warps, PF its
-- inputs' loads (0 when needed, 1 a chunk ahead, 2 as 1 with w^T and kd also stored to LDS
-- ahead, in two buffers, 3 w^T and k as the products' fragments straight into registers, 4 as 3 with
-- the next chunk's in a second set of registers, 5 as 4 with the chunk's step one product: kd folded
-- into its operands C = w^T kd and B = u^T kd, which _wy writes, and vn made by out). The kernels (prep launched on wave-64 targets only:
-- elsewhere wy does its work) take their LDS at launch; each must fit the target (kt_gdn_prefill_lds in the descriptor
-- is the same arithmetic).

local function pad16(x) return math.ceil(x / 16) * 16 end

-- bytes of each kernel's LDS struct: prep, wy, the state pass, out
local function lds(p)
  local lk, lt = p.DK + 8, p.BT + 8
  local maxd = math.max(p.DK, p.DV)
  local prep = p.BT * lk * 2
  local wy = p.BT * lk * 2 + math.max(maxd * lt * 2, 16 * p.BT * 4) + p.BT * (p.BT + 4) * 4
             + 3 * p.BT * 4   -- X rounded in A's bytes
  -- w^T and kd (two buffers at PF 2, a row of each at PF 3 and 4: the arrays are never empty), the key
  -- splits' partial vn^T (a 16 x 16 fp32 tile: 1 KiB on every target) and vn^T's P fragments (512
  -- bytes a tile, 1 KiB on gfx11), each at least one a token tile
  local ks = p.NW / (p.BV / 16)
  local tt = p.BT / 16
  local ops = p.PF >= 3 and (lt * 2 + lk * 2) or (p.PF == 2 and 2 or 1) * (p.DK * lt * 2 + p.BT * lk * 2)
  local state = ops + (ks > 1 and p.NW or 1) * tt * 1024 + (ks > 1 and p.BV / 16 or 1) * tt * 1024
  if p.PF == 5 then   -- no partials (one tile's, unused); S^T's P fragments, every key tile, two buffers
    state = ops + 1024 + (ks > 1 and p.BV / 16 or 1) * 2 * (p.DK / 16) * 1024
  end
  local out = p.BT * lk * 2 + math.max(p.BT, 64) * lk * 2 + p.BT * lt * 2 + 64 * lt * 2 + p.BT * 4
              + (p.PF == 5 and p.BT or 1) * lk * 2   -- PF 5: w
  return pad16(prep), pad16(wy), pad16(state), pad16(out)
end

return {
  family = "gdn",
  template = "prefill.hip",
  kernel = "kt_gdn_prefill",
  ops = { "gdn_prefill" },
  -- the launches beside the state pass (the named kernel): held to its spill rules
  companions = { "_prep", "_wy", "_out" },
  axes = {
    { "dtype", { "bf16", "fp16" } },
    { "VK", { 0, 1 } },
    { "DK", { 128 } },
    { "DV", { 128 } },
    { "BT", { 16, 32, 64 } },
    { "BV", { 16, 32, 64 } },
    { "NW", { 1, 2, 4, 8 } },
    { "PF", { 0, 1, 2, 3, 4, 5 } },
  },

  -- the state pass (the kernel the name is of); prep and wy run 4 warps, out BT / 16
  threads = function(p, t) return p.NW * t.wave_size end,
  lds_at_launch = true,

  lds_bytes = function(p, t)
    local _, _, state = lds(p)
    return state
  end,

  constraint = function(p, t)
    if p.DV % p.BV ~= 0 then return false, "BV does not divide DV" end
    if p.DV % 64 ~= 0 then return false, "out takes DV in rounds of 64 columns" end
    -- a warp owns a 16-column value tile over a share of the keys: NW / (BV / 16) warps a tile
    if p.NW % (p.BV / 16) ~= 0 then return false, "NW is not a multiple of BV / 16 (a warp a value tile at least)" end
    if (p.DK / 16) % (p.NW / (p.BV / 16)) ~= 0 then return false, "the key split NW / (BV / 16) does not divide DK / 16" end
    -- the state lives in the accumulators: at most 64 floats a lane (wave32; half on wave64)
    local per_lane = p.DK * p.BV / (p.NW * t.wave_size)
    if per_lane > 64 then return false, "more than 64 state floats a lane" end
    -- a chunk's w^T and kd in flight in registers (PF >= 1): at most 8 + 8 16-byte pieces a thread
    if p.PF >= 1 and p.PF <= 2 and p.BT * p.DK / 8 > 8 * p.NW * t.wave_size then return false, "PF: more than 8 pieces of w^T a thread in flight" end
    -- PF 3, 4: a warp's fragments of its key tiles x the token tiles, w^T's and k's, in registers
    if (p.PF == 3 or p.PF == 4) and (p.DK / 16 / (p.NW / (p.BV / 16))) * (p.BT / 16) > 8 then return false, "PF 3, 4: more than 8 tiles of w^T a warp in flight" end
    -- PF 5: a warp's fragments of -C (every key tile by its own), the next chunk's in a second set
    if p.PF == 5 and (p.DK / 16) * (p.DK / 16 / (p.NW / (p.BV / 16))) > 8 then
      return false, "PF 5: more than 8 fragments of -C a warp in flight"
    end
    if p.PF >= 3 and t.mma == "wmma-gfx11" then return false, "PF 3-5: gfx11's replicated fragments are twice a tile's bytes" end
    local prep, wy, state, out = lds(p)
    local limit = t.lds_at_launch_max
    if prep > limit then return false, "prep's LDS over the target's limit" end
    if wy > limit then return false, "wy's LDS over the target's limit" end
    if state > limit then return false, "the state pass's LDS over the target's limit" end
    if out > limit then return false, "out's LDS over the target's limit" end
    return true
  end,
}
