// The maps of the elementwise kernels (elementwise.wgsl: one element a thread; elementwise_vec4.wgsl: four),
// written once on vec4s: the scalar kernel maps vec4f(x). OP selects the function; `alpha`, `beta` are scalars.
//   0 add     a + b            1 sub   a - b          2 mul   a * b         3 axpby  alpha*a + beta*b
//   4 scale   alpha*a + beta   5 exp   exp(a)         6 neg  -a             7 div    a / b
//   8 silu    a*sigmoid(a)     9 square a*a           10 relu max(a,0)     11 sqrt  sqrt(a)
//  12 bcast   alpha*b (a only gives the length)
// `b` broadcasts when shorter than `a` (b index = i % p.nb), which covers bias and per-column vectors; with
// ROW_BCAST it repeats each element of b along a row of p.nb columns instead (b index = i / p.nb).
override OP: u32 = 0u;
override ROW_BCAST: bool = false;
struct Params { n: u32, nb: u32, alpha: f32, beta: f32 }

fn applyOp(x: vec4f, y: vec4f) -> vec4f {
  switch OP {
    case 0u: { return x + y; }
    case 1u: { return x - y; }
    case 2u: { return x * y; }
    case 3u: { return p.alpha * x + p.beta * y; }
    case 4u: { return p.alpha * x + p.beta; }
    case 5u: { return exp(x); }
    case 6u: { return -x; }
    case 7u: { return x / y; }
    case 8u: { return x / (1.0 + exp(-x)); }
    case 9u: { return x * x; }
    case 10u: { return max(x, vec4f(0.0)); }
    case 11u: { return sqrt(x); }
    case 12u: { return p.alpha * y; }
    default: { return x; }
  }
}
