-- 16 axes with 31-character names and one-character string values: the kernel name fits
-- (kt_toy_wide_a_b_...), the params JSON ({"<31 characters>":"a",...} x 16) does not.
local axes = {}
for i = 1, 16 do
  axes[i] = { string.format("P%02d", i) .. string.rep("z", 28), { string.char(96 + i) } }
end
return {
  family = "toy", template = "toy.hip", kernel = "kt_toy_wide", ops = { "toy" },
  axes = axes,
  threads = function(p, t) return 32 end,
  constraint = function(p, t) return true end,
}
