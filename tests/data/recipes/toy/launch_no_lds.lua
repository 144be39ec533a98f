return {
  family = "toy", template = "toy.hip", kernel = "kt_toy_launch", ops = { "toy" },
  axes = { { "dtype", { "bf16" } } },
  threads = function(p, t) return t.wave_size end,
  lds_at_launch = true,
  constraint = function(p, t) return true end,
}
