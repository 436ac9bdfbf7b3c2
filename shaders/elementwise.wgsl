// Elementwise maps over f32 tensors. OP selects the function; `b` broadcasts when shorter than `a`
// (b index = i % p.nb), which covers bias and per-column vectors; with ROW_BCAST it repeats each element
// of b along a row of p.nb columns instead (b index = i / p.nb). `alpha`, `beta` are scalars.
//   0 add     a + b            1 sub   a - b          2 mul   a * b         3 axpby  alpha*a + beta*b
//   4 scale   alpha*a + beta   5 exp   exp(a)         6 neg  -a             7 div    a / b
//   8 silu    a*sigmoid(a)     9 square a*a           10 relu max(a,0)     11 sqrt  sqrt(a)
//  12 bcast   alpha*b (a only gives the length)
override OP: u32 = 0u;
override ROW_BCAST: bool = false;

#include "lib/map.wgsl"
struct Params { n: u32, nb: u32, alpha: f32, beta: f32 }
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

fn size() -> u32 { return p.n; }

fn element(i: u32) {
  let x = a[i];
  var y: f32;
  if (ROW_BCAST) { y = b[i / p.nb]; } else { y = b[i % p.nb]; }
  var r: f32;
  switch OP {
    case 0u: { r = x + y; }
    case 1u: { r = x - y; }
    case 2u: { r = x * y; }
    case 3u: { r = p.alpha * x + p.beta * y; }
    case 4u: { r = p.alpha * x + p.beta; }
    case 5u: { r = exp(x); }
    case 6u: { r = -x; }
    case 7u: { r = x / y; }
    case 8u: { r = x / (1.0 + exp(-x)); }
    case 9u: { r = x * x; }
    case 10u: { r = max(x, 0.0); }
    case 11u: { r = sqrt(x); }
    case 12u: { r = p.alpha * y; }
    default: { r = x; }
  }
  out[i] = r;
}
