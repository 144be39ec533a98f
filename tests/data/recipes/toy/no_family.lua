return {
  template = "toy.hip", kernel = "kt_toy_nofam", ops = { "toy" },
  axes = { { "BM", { 16, 32 } } },
  threads = function(p, t) return 32 end,
  constraint = function(p, t) return true end,
}
