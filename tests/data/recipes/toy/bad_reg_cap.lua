return {
  template = "toy.hip", kernel = "kt_toy_cap", ops = { "toy" },
  axes = { { "B", { 1 } } },
  threads = function(p, t) return 100 end,
  constraint = function(p, t)
    return t.reg_cap(100, p.B) > 0
  end,
}
