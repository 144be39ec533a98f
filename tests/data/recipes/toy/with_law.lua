return {
  template = "toy.hip", kernel = "kt_toy_swap", ops = { "toy" }, law = "swapab",
  axes = { { "dtype", { "bf16" } }, { "BM", { 16 } } },
  threads = function(p, t) return 32 end,
  constraint = function(p, t) return true end,
}
