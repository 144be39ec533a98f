return {
  family = "toy", template = "toy.hip", kernel = "kt_toy",
  axes = { { "BM", { 16 } } },
  threads = function(p, t) return 32 end,
  constraints = function(p, t) return true end,
}
