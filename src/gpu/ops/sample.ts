// Token sampling for generation (shaders/sample.wgsl): greedy, temperature and top-p (nucleus), one token
// per row, deterministic given the caller's uniforms.
import type { Tensor } from '../tensor.ts';
import { expect, rowsCols } from './util.ts';

/**
 * Threads per row (one workgroup a row) of shaders/sample.wgsl and decode_sample.wgsl on a GPU, and wherever the
 * nucleus is drawn (topP < 1): its histograms have a bin per thread (lib/radix_select.wgsl).
 */
const SAMPLE_WG = 256;

/**
 * Threads per row on a CPU driver where no nucleus is drawn: there a workgroup runs as blocks of 8 lanes and every
 * barrier of the reductions switches through all of them (a decoding step's sampling of 4 rows of 1,024 logits on
 * lavapipe: 253 µs at 256 threads, 113-128 at 16 or 32).
 */
const SAMPLE_WG_CPU = 16;

/** The workgroup size `sample` and decodeSample run with. */
export function sampleWorkgroup(isCpu: boolean, temperature: number, topP: number): number {
  return isCpu && (temperature <= 0 || topP >= 1) ? SAMPLE_WG_CPU : SAMPLE_WG;
}

export interface SampleOptions {
  /** 0 = greedy argmax (ties: lowest id); otherwise logits are divided by it. */
  temperature: number;
  /** Nucleus mass in (0, 1]: sample among the fewest most probable tokens whose mass >= topP; 1 = off (default). */
  topP?: number;
  /** f32 [B]: one U(0, 1) draw per row from the caller's seeded RNG. */
  uniforms: Tensor;
}

export interface SampleResult {
  /** i32 [B]: the chosen token per row. */
  ids: Tensor;
  /** f32 [B]: log-prob of the chosen token under the temperature-scaled FULL distribution, before top-p
   *  truncation (the policy's log pi for RL ratios); with temperature 0, under the untempered log-softmax. */
  logprobs: Tensor;
}

/**
 * [B, V] of sampling inputs after checking them (dtypes, one uniform per row, the temperature and topP); `rows`
 * and `vocab` (-1: any) are the shape a caller expects.
 */
export function checkSampleInputs(
  logits: Tensor,
  rows: number,
  vocab: number,
  opts: { temperature: number; topP: number; uniforms: Tensor },
): [number, number] {
  const { temperature, topP, uniforms } = opts;
  expect(logits, 'sample logits', { dtype: 'f32' });
  expect(uniforms, 'sample uniforms', { dtype: 'f32' });
  if (logits.rank < 1 || logits.shape[logits.rank - 1] === 0) {
    throw new Error(`piplay: sample needs logits [B, V] with V >= 1, got ${logits.describe()}`);
  }
  const [B, V] = rowsCols(logits);
  if ((rows >= 0 && B !== rows) || (vocab >= 0 && V !== vocab)) {
    throw new Error(`piplay: sample: logits ${logits.describe()} are not [${rows}, ${vocab}]`);
  }
  if (uniforms.size !== B) {
    throw new Error(
      `piplay: sample: uniforms ${uniforms.describe()} must hold one draw per row of ${logits.describe()} (${B})`,
    );
  }
  if (!(temperature >= 0) || !Number.isFinite(temperature)) {
    throw new Error(`piplay: sample: temperature must be a finite number >= 0, got ${temperature}`);
  }
  if (!(topP > 0 && topP <= 1)) throw new Error(`piplay: sample: topP must be in (0, 1], got ${topP}`);
  return [B, V];
}

/**
 * Samples one token per row of logits [B, V] (or [..., V]) by inverse CDF: the allowed tokens (all, or the
 * top-p nucleus) in id order, renormalised, and the first whose cumulative mass exceeds u_b times the total.
 * No gradient.
 */
export function sample(logits: Tensor, opts: SampleOptions): SampleResult {
  const e = logits.engine;
  const { temperature, topP = 1, uniforms } = opts;
  const [B, V] = checkSampleInputs(logits, -1, -1, { temperature, topP, uniforms });
  const lead = logits.shape.slice(0, -1);
  const ids = e.empty(lead, 'i32');
  const logprobs = e.empty(lead);
  if (B > 0) {
    e.dispatch({
      shader: 'sample',
      constants: { WG: sampleWorkgroup(e.info.isCpu, temperature, topP) },
      params: { B, V, temperature, topP },
      bindings: { logits, uniforms, ids, logprobs },
      workgroups: e.grid(B, 1),
    });
  }
  return { ids, logprobs };
}
