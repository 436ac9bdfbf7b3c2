// RMSNorm's arithmetic (HF LlamaRMSNorm), shared by rmsnorm.wgsl (a workgroup a row) and rmsnorm_rows.wgsl (a
// thread a row), on vec4s (the workgroup kernel maps vec4f(x) of one element):
//   y = x * rstd * w,  rstd = 1 / sqrt(mean(x^2) + eps)
//   dx = rstd * (g*w) - x * k,  k = rstd^3 * sum(g*w*x) / D
struct Params { R: u32, D: u32, eps: f32 }

fn rmsStd(sumSquares: f32) -> f32 { return 1.0 / sqrt(sumSquares / f32(p.D) + p.eps); }

fn rmsNormed(x: vec4f, s: f32, w: vec4f) -> vec4f { return x * s * w; }

fn rmsGradK(s: f32, sumGWX: f32) -> f32 { return s * s * s * sumGWX / f32(p.D); }

fn rmsGrad(x: vec4f, g: vec4f, w: vec4f, s: f32, k: f32) -> vec4f { return s * g * w - x * k; }
