// Conversions between float32 and the 16-bit float formats (IEEE half, bfloat16), on the CPU.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 -> IEEE half bits, round to nearest even, with subnormals, inf and NaN. */
export function f32ToF16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // inf / NaN
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow -> inf
  if (e <= 0) {
    if (e < -10) return sign; // underflow -> signed zero
    mant |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    let m = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    if (rest > half || (rest === half && m & 1)) m++;
    return sign | m;
  }
  let m = mant >>> 13;
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && m & 1)) {
    m++;
    if (m === 0x400) {
      m = 0;
      e++;
      if (e >= 0x1f) return sign | 0x7c00;
    }
  }
  return sign | (e << 10) | m;
}

export function f16BitsToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

export function bf16BitsToF32(h: number): number {
  u32[0] = h << 16;
  return f32[0]!;
}

/** float32 -> bfloat16 bits, round to nearest even (NaN stays NaN). */
export function f32ToBf16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  if ((x & 0x7f800000) === 0x7f800000 && x & 0x7fffff) return (x >>> 16) | 0x40;
  const rounded = x + 0x7fff + ((x >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}

/** Each value as the 16 bits `toBits` gives it (f32ToF16Bits or f32ToBf16Bits). */
function f32ArrayTo16(src: ArrayLike<number>, toBits: (value: number) => number): Uint16Array {
  const out = new Uint16Array(src.length);
  for (let i = 0; i < src.length; i++) out[i] = toBits(src[i]!);
  return out;
}

export function f32ArrayToF16(src: ArrayLike<number>): Uint16Array {
  return f32ArrayTo16(src, f32ToF16Bits);
}

export function f32ArrayToBf16(src: ArrayLike<number>): Uint16Array {
  return f32ArrayTo16(src, f32ToBf16Bits);
}

export function f16ArrayToF32(src: Uint16Array): Float32Array {
  const out = new Float32Array(src.length);
  for (let i = 0; i < src.length; i++) out[i] = f16BitsToF32(src[i]!);
  return out;
}

/** bf16 bits -> float32 (exact: a bf16 is the top half of a float32). */
export function bf16ArrayToF32(src: Uint16Array): Float32Array {
  const words = new Uint32Array(src.length);
  for (let i = 0; i < src.length; i++) words[i] = src[i]! << 16;
  return new Float32Array(words.buffer);
}
