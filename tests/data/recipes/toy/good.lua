return {
  family = "toy", template = "toy.hip", kernel = "kt_toy", ops = { "toy" },
  axes = { { "dtype", { "bf16", "fp16" } }, { "BM", { 16, 32, 64 } }, { "WM", { 1, 2 } } },
  threads = function(p, t) return p.WM * t.wave_size end,
  lds_bytes = function(p, t) return p.BM * 64 end,
  constraint = function(p, t)
    if p.BM % (16 * p.WM) ~= 0 then return false, "tile not divisible by waves" end
    if p.BM * 64 * 2 > t.lds_per_workgroup / 16 then return false, "lds over budget" end
    return true
  end,
}
