// npm run probe -- --model FOLDER [--preset demo] [--questions 40] [--modes full,partial,gt]
//                   [--examiner-questions 40] [--<setting> value ...]
// npm run probe -- --run DIR [--questions 40] [--modes ...] [--examiner-questions 40]
// The teacher probe (src/lab/probe.ts) on world-generated training questions (never the held-out
// set): what the privileged context gives the teacher, and where the distillation term pushes the student;
// then the examiner probe (src/lab/examiner-probe.ts): whether the examiner's questions are true of
// the world and how often the student answers them.
// With --model the student, the teacher and the examiner are the same weights (the start of training); with
// --run they are the run's latest ones.
import { join, resolve } from 'node:path';
import { PRIVILEGED_MODES, type PrivilegedMode } from '../env/prompts.ts';
import { Engine } from '../gpu/engine.ts';
import { nodeHost } from '../gpu/host/node.ts';
import type { CausalLM } from '../model/decoder.ts';
import { ConfigError, makeConfig, optionHelp, type PresetName, type SelfPlayConfig } from '../selfplay/config.ts';
import { examinerProbeTable, probeTable } from '../lab/experiment/markdown.ts';
import type { BaseModel } from '../selfplay/base-model.ts';
import type { Environment } from '../selfplay/environment.ts';
import { probeQuestions, probeTeacher } from '../lab/probe.ts';
import { probeExaminer } from '../lab/examiner-probe.ts';
import { countOption, MAX_QUESTIONS, MAX_SEED, parseArgs, runOrModel } from './args.ts';
import { openModel, openRun } from './setup.ts';
import { hubModelRef } from '../hub/hub-folder.ts';
import { runCommand } from './command.ts';

const USAGE = [
  'usage: npm run probe -- --model FOLDER [--preset demo] [--questions N] [--modes full,partial,gt] ' +
    '[--examiner-questions N] [--<setting> value ...]',
  '       npm run probe -- --run DIR [--questions N] [--modes ...] [--examiner-questions N]',
  '  --model DIR      an HF model folder: student, teacher and examiner are its weights (as at the start of training)',
  '  --run DIR        a run folder of npm run train: its latest student, teacher and examiner',
  '  --questions N    world-generated training questions for the teacher probe ' +
    '(default 40; never the held-out set; 0: skip it)',
  "  --modes LIST     privileged modes to compare with the student's prompt " +
    `(default full,partial,gt; any of ${PRIVILEGED_MODES.filter((m) => m !== 'none').join(', ')})`,
  '  --examiner-questions N  questions the examiner writes for the examiner probe (default 40; 0: skip it)',
  "  --probe-seed N   seed of the questions and the student's sampled rollouts (default 7)",
  '  --json           print the result as JSON as well',
  'settings for --model:',
  ...optionHelp(),
].join('\n');

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(
    argv,
    ['run', 'model', 'preset', 'questions', 'modes', 'probe-seed', 'examiner-questions'],
    ['help', 'json'],
  );
  if (args.own['help']) {
    console.log(USAGE);
    return 0;
  }
  const { runDir, modelDir } = runOrModel(args.own);
  const count = countOption(args.own, 'questions', 40, MAX_QUESTIONS);
  const examinerCount = countOption(args.own, 'examiner-questions', 40, MAX_QUESTIONS);
  const seed = countOption(args.own, 'probe-seed', 7, MAX_SEED);
  const modes = (args.own['modes'] ?? 'full,partial,gt').split(',').map((m) => m.trim()) as PrivilegedMode[];
  for (const m of modes) {
    if (!PRIVILEGED_MODES.includes(m) || m === 'none')
      throw new ConfigError(
        `--modes: '${m}' is not allowed; use a list of ${PRIVILEGED_MODES.filter((x) => x !== 'none').join(', ')}`,
      );
  }

  const engine = await Engine.create(nodeHost());
  let config: SelfPlayConfig;
  let student: CausalLM;
  let teacher: CausalLM | null;
  let examiner: CausalLM;
  let dispose: () => void;
  let base: BaseModel;
  let env: Environment;
  if (runDir) {
    if (Object.keys(args.settings).length)
      throw new ConfigError("--run probes with the run's own settings; drop the other settings");
    const run = await openRun(engine, runDir, 'run', ['student', 'teacher', 'examiner']);
    ({ config, env, base } = run);
    const policies = run.policies;
    if (!policies.teacher && count > 0)
      throw new ConfigError(
        `--run: ${resolve(runDir)} has no teacher (privileged 'none'); ` +
          `probe its exported student with --model ${join(resolve(runDir), 'student')}, ` +
          'or only its examiner with --questions 0',
      );
    student = policies.student;
    teacher = policies.teacher;
    examiner = policies.examiner;
    dispose = () => policies.dispose();
    console.log(`probe: the student, teacher and examiner of ${resolve(runDir)} at ${run.at}`);
  } else {
    config = makeConfig((args.own['preset'] ?? 'demo') as PresetName, { ...args.settings, model: modelDir! });
    const opened = await openModel(engine, config, ['student', 'teacher', 'examiner']);
    ({ env, base } = opened);
    student = teacher = examiner = opened.model;
    dispose = () => student.dispose();
    console.log(`probe: ${hubModelRef(modelDir!) ? modelDir : resolve(modelDir!)} as student, teacher and examiner`);
  }
  const ctx = { config, base, env, engine };
  const json: Record<string, unknown> = {};
  if (count > 0) {
    const questions = probeQuestions(ctx, count, seed);
    const r = await probeTeacher(ctx, student, teacher!, questions, modes, seed);
    console.log(`\nThe teacher probe\n\n${probeTable(r)}`);
    json['teacher'] = r;
  }
  if (examinerCount > 0) {
    const r = await probeExaminer(ctx, examiner, student, examinerCount, seed);
    console.log(`\nThe examiner probe\n\n${examinerProbeTable(r)}`);
    json['examiner'] = r;
  }
  if (args.own['json']) console.log(JSON.stringify(json));
  dispose();
  engine.destroy();
  return 0;
}

runCommand('probe', main);
