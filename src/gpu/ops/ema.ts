// In-place exponential moving average (shaders/ema.wgsl): the privileged teacher follows the student.
import type { Tensor } from '../tensor.ts';
import { expect } from './util.ts';

/** Workgroup size of shaders/ema.wgsl. */
const WG = 256;

/** teacher <- (1 - tau)*teacher + tau*student, in place (f32, same shape). Not recorded on the tape. */
export function emaInto(teacher: Tensor, student: Tensor, tau: number): void {
  const e = teacher.engine;
  expect(teacher, 'emaInto (teacher)', { dtype: 'f32' });
  expect(student, 'emaInto (student)', { dtype: 'f32', shape: teacher.shape });
  if (!(tau >= 0 && tau <= 1)) throw new Error(`piplay: emaInto: tau must be in [0, 1], got ${tau}`);
  if (teacher.storage === student.storage) throw new Error('piplay: emaInto: teacher and student share storage');
  if (teacher.size === 0) return;
  const leave = e.profile?.enterOuter('teacher EMA');
  e.dispatch({
    shader: 'ema',
    constants: { WG },
    params: { n: teacher.size, tau },
    bindings: { teacher, student },
    workgroups: e.grid(teacher.size, WG),
  });
  leave?.();
}
