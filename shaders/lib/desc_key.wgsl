// The sort key of the top-K selections (radix_select.wgsl, topk_kl_rows.wgsl): the composite key (descKey(x), id)
// orders logits largest first, ties by lower id. Needs nothing declared.

// A u32 whose unsigned order reverses the float order (largest float -> smallest key). -0 is folded onto +0
// so that equal values tie and fall to id order.
fn descKey(x: f32) -> u32 {
  var b = bitcast<u32>(x);
  if (b == 0x80000000u) { b = 0u; }
  let ascending = select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
  return ~ascending;
}
