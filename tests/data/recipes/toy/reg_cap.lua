-- t.reg_cap(threads, blocks) for 256-thread blocks: each count is rejected with its cap as the reason
return {
  template = "toy.hip", kernel = "kt_toy_cap", ops = { "toy" },
  axes = { { "B", { 1, 2, 3, 4, 5, 9 } } },
  threads = function(p, t) return 256 end,
  constraint = function(p, t)
    if p.B == 1 then return true end
    return false, "cap " .. t.reg_cap(256, p.B)
  end,
}
