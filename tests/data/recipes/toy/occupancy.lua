-- t.occupancy_fits(threads, blocks, lds, regs) for 128-thread blocks estimated at 160 registers
return {
  template = "toy.hip", kernel = "kt_toy_occ", ops = { "toy" },
  axes = { { "B", { 0, 2, 3, 4 } }, { "L", { 40000, 60000 } } },
  threads = function(p, t) return 128 end,
  constraint = function(p, t) return t.occupancy_fits(128, p.B, p.L, 160) end,
}
