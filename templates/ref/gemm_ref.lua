-- gemm_ref.lua: the GPU reference of the dense GEMM (gemm_ref.hip), one per dtype. Its op is
-- "reference:gemm": the tuner verifies against it; nothing dispatches it.
return {
  template = "gemm_ref.hip",
  law = "ref",
  kernel = "kt_gemm_ref",
  ops = { "reference:gemm" },
  axes = {
    { "dtype", { "bf16", "fp16" } },
  },
  threads = function(p, t) return 256 end,
  lds_bytes = function(p, t) return 2 * 16 * 17 * 8 end,
  constraint = function(p, t) return true end,
}
