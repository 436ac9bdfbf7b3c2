// The kernel's uniform: the including shader declares struct Params, whose fields the engine fills by name
// from the host's values (src/gpu/kernel-interface.ts).
@group(0) @binding(0) var<uniform> p: Params;
