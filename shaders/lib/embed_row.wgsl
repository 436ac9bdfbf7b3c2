// What decode_embed.wgsl and decode_sample.wgsl do with a row's new token: its embedding and whether it is a stop
// id. The includer declares Params with D (hidden size), V (vocabulary) and stopAt (where the state's stop ids
// start: a count, then the ids; lib/decode_rows.wgsl has the layout), `override W_FORMAT: u32`, and the bindings
// `table: array<u32>` (the embedding table, f32/f16/bf16 words, lib/packed16.wgsl) and `state: array<u32>`.

/** Element c of token id's embedding row; zero for an id outside the table. */
fn embeddingAt(id: u32, c: u32) -> f32 {
  if (id >= p.V) { return 0.0; }
  let i = id * p.D + c;
  return packedValue(table[packedWord(i, W_FORMAT)], i, W_FORMAT);
}

/** Whether `id` is one of the call's stop ids. */
fn isStopId(id: u32) -> bool {
  let count = state[p.stopAt];
  for (var k = 0u; k < count; k++) {
    if (state[p.stopAt + 1u + k] == id) { return true; }
  }
  return false;
}
