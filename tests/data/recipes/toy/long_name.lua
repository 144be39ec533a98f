-- At the documented limits: 16 axes, 31-character axis names, 31-character string values. The
-- kernel name would be 16 x 32 characters after the prefix: more than a variant's name holds.
local axes = {}
for i = 1, 16 do
  axes[i] = { string.format("A%02d", i) .. string.rep("x", 28), { string.format("v%02d", i) .. string.rep("y", 28) } }
end
return {
  family = "toy", template = "toy.hip", kernel = "kt_toy_long", ops = { "toy" },
  axes = axes,
  threads = function(p, t) return 32 end,
  constraint = function(p, t) return true end,
}
