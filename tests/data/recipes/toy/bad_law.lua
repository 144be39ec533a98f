return {
  template = "toy.hip", kernel = "kt_toy", law = "swap ab",
  axes = { { "BM", { 16 } } },
  threads = function(p, t) return 32 end,
  constraint = function(p, t) return true end,
}
