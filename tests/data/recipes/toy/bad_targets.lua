return {
  family = "toy", template = "toy.hip", kernel = "kt_toy_bad", ops = { "toy" },
  targets = { "gfx942", "gfx9000" },
  axes = { { "dtype", { "bf16" } } },
  threads = function(p, t) return t.wave_size end,
  constraint = function(p, t) return true end,
}
