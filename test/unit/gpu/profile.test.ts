// The names a profile by kernel gives its phases (src/gpu/profile.ts): phaseKernel splits what dispatchPhase joins,
// which the benchmarks' tables by kernel rely on.
import { describe, expect, it } from 'vitest';
import { phaseKernel, Profile } from '../../../src/gpu/profile.ts';

describe('phaseKernel', () => {
  it('splits a phase by kernel back into its phase and kernel', () => {
    const profile = new Profile();
    profile.byKernel = true;
    profile.setStage('student');
    const leave = profile.enter('forward teacher');
    const name = profile.dispatchPhase('attention_rows_fwd.main');
    leave();
    expect(phaseKernel(name)).toEqual({ phase: 'student / forward teacher', kernel: 'attention_rows_fwd.main' });
  });

  it('leaves a phase without a kernel whole', () => {
    expect(phaseKernel('eval / generate student')).toEqual({ phase: 'eval / generate student', kernel: null });
    expect(phaseKernel('run / other')).toEqual({ phase: 'run / other', kernel: null });
  });
});
