return {
  family = "toy", template = "toy.hip", kernel = "kt_toy_cdna", ops = { "toy" },
  targets = { "gfx942", "gfx90a" },
  axes = { { "dtype", { "bf16" } }, { "BM", { 16, 32 } } },
  threads = function(p, t) return t.wave_size end,
  lds_bytes = function(p, t) return p.BM * 512 end,
  lds_at_launch = true,
  constraint = function(p, t) return true end,
}
