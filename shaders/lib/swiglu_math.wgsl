// SwiGLU's arithmetic, on vec4s (swiglu.wgsl maps vec4f(x) of one element, swiglu_vec4.wgsl four):
//   forward:  y = silu(gate) * up, silu(a) = a * sigmoid(a)
//   backward: dup = gy * silu(gate), dgate = gy * up * s * (1 + gate * (1 - s)),  s = sigmoid(gate)

// 1 / (1 + exp(-a)): exp overflows to +inf for a < -88 and the quotient is then 0, as it should be.
fn sigmoid4(a: vec4f) -> vec4f {
  return 1.0 / (1.0 + exp(-a));
}

fn swigluForward(a: vec4f, u: vec4f) -> vec4f {
  return a * sigmoid4(a) * u;
}

struct SwigluGrads { dgate: vec4f, dup: vec4f }

fn swigluBackward(a: vec4f, u: vec4f, g: vec4f) -> SwigluGrads {
  let s = sigmoid4(a);
  return SwigluGrads(g * u * s * (1.0 + a * (1.0 - s)), g * a * s);
}
