// The page: starts the engine worker, mounts the panels, and folds the run's messages into the view state.
// Nothing here computes on the GPU or blocks: the worker does the work, the page renders at most once per
// animation frame (charts less often), and only the visible view. The views can also show another run than the
// page's own (a recorded example, a stored run's history; src/ui/replay.ts), and the charts overlay a second one.
import * as Comlink from 'comlink';
import type { CheckpointMeta, JobKind, PretrainRequest, RunPhase, WorkerMessage } from '../worker/protocol.ts';
import { unpackEvent } from '../worker/wire.ts';
import { startEngineWorker } from './engine-client.ts';
import { html } from './html.ts';
import { ChartsPanel } from './panels/charts.ts';
import { CheckpointsPanel } from './panels/checkpoints.ts';
import { BeforeAfterPanel } from './panels/before-after.ts';
import { ExaminerPanel } from './panels/examiner.ts';
import { renderFindings, renderGuide, renderSoftwareWarning, softwareAdapter } from './panels/guide.ts';
import { HeatmapPanel } from './panels/heatmap.ts';
import { Alerts, renderLog } from './panels/messages.ts';
import { PretrainPanel } from './panels/pretrain.ts';
import { beforeRunText, renderProgress } from './panels/progress.ts';
import { RunsBar } from './panels/runs-bar.ts';
import { SetupPanel } from './panels/setup.ts';
import { StudentPanel } from './panels/student.ts';
import {
  fetchExample,
  listExamples,
  stateFromEvents,
  viewRecording,
  type ExampleEntry,
  type ViewedRun,
} from './replay.ts';
import { applyEvent, emptyState, type RunState } from './state.ts';
import { Tabs } from './tabs.ts';

const status = document.getElementById('gpu-status')!;
const alerts = new Alerts(document.getElementById('alerts')!);

function fatal(title: string, message: string): void {
  status.textContent = title;
  status.className = 'status error';
  alerts.show('error', title, message);
}

async function boot(): Promise<void> {
  // Without a usable GPU nothing can train, but recorded examples and stored runs can still be viewed.
  const viewOnly = ' The recorded example and stored runs can still be viewed.';
  if (!('gpu' in navigator)) {
    fatal(
      'WebGPU is not available',
      'This browser does not expose WebGPU (navigator.gpu). Use a recent Chrome or Edge (113+); on Linux enable ' +
        'chrome://flags/#enable-unsafe-webgpu and chrome://flags/#enable-vulkan, then reload. The page must be ' +
        'served over https or from localhost.' +
        viewOnly,
    );
    await new App(startEngineWorker(), '').mount();
    return;
  }
  const engine = startEngineWorker();
  const init = await engine.init();
  if (!init.ok || !init.info) {
    fatal('WebGPU is not usable', (init.error ?? 'unknown error') + viewOnly);
    await new App(engine, '').mount();
    return;
  }
  const info = init.info;
  const adapter = info.description || info.vendor;
  status.textContent = `${adapter}${info.isCpu ? ' (software)' : ''}${info.f16 ? ' · f16' : ''}`;
  status.className = 'status ok';
  const software = softwareAdapter(info);
  if (software) document.getElementById('gpu-warning')!.innerHTML = renderSoftwareWarning(software).text;
  await new App(engine, info.description || info.vendor).mount();
  // Development-only test hooks: the e2e tests simulate a lost GPU device, and watch the worker's buffer pool.
  if (import.meta.env.DEV)
    (window as unknown as { __piplay: unknown }).__piplay = {
      loseDevice: () => engine.loseDevice(),
      poolStats: () => engine.poolStats(),
    };
  const test = await engine.selfTest(64);
  status.title = `self-test matmul 64³: max error ${test.maxError.toExponential(1)}, ${test.ms.toFixed(1)} ms`;
  status.dataset.selftest = test.maxError < 1e-3 ? 'pass' : 'fail';
}

type Engine = ReturnType<typeof startEngineWorker>;

/** The state version each view last rendered: none yet. */
function unrendered() {
  return { examiner: -1, student: -1, heatmap: '', charts: -1, log: -1, progress: -1, pretrain: -1 };
}

class App {
  private state: RunState = emptyState();
  /** The state version each view last rendered. */
  private rendered = unrendered();
  private frame = 0;
  private lastCharts = 0;
  private phase: RunPhase = 'idle';
  /** The job the phase belongs to (a self-play run or a pretraining). */
  private job: JobKind = 'selfplay';
  private iterations: number | null = null;
  /** The model key of the run started from this page (the pace of its units is stored under it). */
  private runModel: string | null = null;
  private setup!: SetupPanel;
  private checkpoints!: CheckpointsPanel;
  private examiner!: ExaminerPanel;
  private student!: StudentPanel;
  private heatmap!: HeatmapPanel;
  private charts!: ChartsPanel;
  private pretrain!: PretrainPanel;
  private tabs!: Tabs;
  private runsBar!: RunsBar;
  /** The run the views show instead of the page's own, if any. */
  private viewing: ViewedRun | null = null;
  private examples: ExampleEntry[] = [];
  /** The run overlaid on the charts ('' for none); the latest pick wins when loads overlap. */
  private overlayId = '';
  /** The stored runs with a checkpoint (the charts can overlay them). */
  private stored: CheckpointMeta[] = [];

  constructor(
    private engine: Engine,
    /** The adapter's description: the pace of a run is stored per GPU. */
    private adapter: string,
  ) {}

  async mount(): Promise<void> {
    const $ = (id: string) => document.getElementById(id)!;
    document.getElementById('app')!.hidden = false;
    this.examiner = new ExaminerPanel($('panel-examiner'));
    this.student = new StudentPanel($('panel-student'));
    this.heatmap = new HeatmapPanel($('panel-heatmap'), (r) => this.engine.ablate(r));
    this.charts = new ChartsPanel($('panel-charts'));
    this.charts.onOverlay = (id) => void this.setOverlay(id);
    this.tabs = new Tabs($('tabs'), () => this.schedule(true));
    // The examples first: they need neither the GPU nor the worker.
    this.runsBar = new RunsBar($('runs-bar'), {
      openExample: (entry) => void this.openExample(entry),
      back: () => this.view(null),
    });
    void listExamples().then(
      (list) => {
        this.examples = list.examples;
        this.runsBar.setExamples(list.examples);
        this.updateOverlayChoices();
        if (list.experiment) $('guide-findings').innerHTML = renderFindings(list.experiment).text;
      },
      (err: Error) => this.runsBar.setExamples(err),
    );
    const e = this.engine;
    new BeforeAfterPanel($('panel-before-after'), () => e.compareBaseAndStudent());
    $('panel-guide').innerHTML = renderGuide().text;
    this.checkpoints = new CheckpointsPanel($('checkpoints'), {
      list: () => e.listCheckpoints(),
      resume: (name) => void this.resumeRun(name),
      view: (name) => void this.viewStored(name),
      use: (name) => this.setup.useCheckpoint(name),
      exportZip: (name) => e.exportCheckpoint(name),
      delete: async (name) => void (await e.deleteCheckpoint(name)),
      importFiles: (input) =>
        e.importCheckpoint(input.kind === 'zip' ? Comlink.transfer(input, [input.bytes.buffer as ArrayBuffer]) : input),
      report: (level, message) =>
        alerts.show(
          level === 'error' ? 'error' : 'info',
          level === 'error' ? 'Checkpoint problem' : 'Checkpoints',
          message,
        ),
      listed: (list) => {
        this.pretrain?.setStored(list);
        this.updateOverlayChoices(list);
      },
    });
    await e.subscribe(Comlink.proxy((msgs: WorkerMessage[]) => this.onMessages(msgs)));
    const embedded = await e.listEmbedded();
    this.setup = new SetupPanel(
      $('setup'),
      $('run-controls'),
      {
        inspectModel: (src, config) => e.inspectModel(src, config),
        checkCorpus: (name, text) => e.checkCorpus(name, text),
        start: (config, model, corpus) =>
          void this.startRun(() => e.start({ config, model, corpus }), config.iterations),
        pause: () => void e.pause(),
        resume: () => void e.resume(),
        stop: () => void e.stop(),
        changed: () => this.renderProgress(),
        save: () =>
          void e.saveNow().then((r) => {
            if (!r.ok) alerts.show('error', 'Could not save a checkpoint', r.error ?? '');
          }),
      },
      embedded,
    );
    this.pretrain = new PretrainPanel(
      $('panel-pretrain'),
      {
        start: (req) => this.startPretrain(req),
        stop: () => void e.stop(),
        use: (name) => this.setup.useCheckpoint(name),
        downloadUnsaved: () => e.exportUnsavedModel(),
      },
      embedded,
    );
    await this.checkpoints.refresh();
    const latest = this.checkpoints.latest;
    if (latest) {
      alerts.show(
        'info',
        'A run can be resumed',
        `Run '${latest.name}' has a checkpoint in this browser. Resume it where it left off?`,
        [{ label: `Resume '${latest.name}'`, run: () => void this.resumeRun(latest.name), primary: true }],
        'resume-offer',
      );
    }
    this.renderProgress();
    setInterval(() => this.phase === 'running' && this.renderProgress(), 1000);
  }

  /** Shows `run` in the views instead of the page's own run (null: the page's own again). */
  private view(run: ViewedRun | null): void {
    this.viewing = run;
    this.rendered = unrendered();
    this.runsBar.setViewing(run);
    const c = run?.config;
    // (The setup panel is mounted once the worker answers; an example can open before.)
    this.heatmap.privileged = c?.privileged ?? this.setup?.privileged ?? 'full';
    this.student.n = c?.rolloutsPerQuestion ?? this.setup?.rollouts ?? 0;
    this.schedule(true);
  }

  private async openExample(entry: ExampleEntry): Promise<void> {
    try {
      this.view(viewRecording(await fetchExample(entry)));
      alerts.clear('view-failed');
    } catch (err) {
      alerts.show('error', 'Could not open the recorded example', (err as Error).message, [], 'view-failed');
    }
  }

  /** A stored run's history as a view (its settings from its checkpoint entry). */
  private async storedView(name: string): Promise<ViewedRun> {
    const { meta, events } = await this.engine.runHistory(name);
    const state = stateFromEvents(events.map(unpackEvent));
    if (events.length === 0)
      applyEvent(state, {
        type: 'log',
        level: 'info',
        message: `run '${name}' was stored before runs kept their history`,
      });
    return { id: name, title: `'${name}'`, kind: 'stored', config: meta.config ?? {}, state };
  }

  private async viewStored(name: string): Promise<void> {
    try {
      this.view(await this.storedView(name));
      alerts.clear('view-failed');
    } catch (err) {
      alerts.show('error', `Could not open run '${name}'`, (err as Error).message, [], 'view-failed');
    }
  }

  /** The runs the charts can overlay: the recorded examples, then the stored runs with a checkpoint. */
  private updateOverlayChoices(list?: readonly CheckpointMeta[]): void {
    if (list) this.stored = list.filter((c) => c.kind === 'run' && c.cursor !== null);
    this.charts.setOverlayChoices([
      ...this.examples.map((x) => ({ id: `example:${x.name}`, title: `${x.title} (recorded example)` })),
      ...this.stored.map((c) => ({ id: `run:${c.name}`, title: `run '${c.name}'` })),
    ]);
  }

  private async setOverlay(id: string): Promise<void> {
    this.overlayId = id;
    if (!id) return this.charts.setOverlay(null);
    try {
      const entry = this.examples.find((x) => `example:${x.name}` === id);
      const run = entry ? viewRecording(await fetchExample(entry)) : await this.storedView(id.slice('run:'.length));
      if (this.overlayId === id) this.charts.setOverlay({ title: run.title, series: run.state.series }, id);
    } catch (err) {
      alerts.show('error', 'Could not overlay that run', (err as Error).message, [], 'view-failed');
      if (this.overlayId === id) this.charts.setOverlay(null);
    }
  }

  private async startRun(
    call: () => Promise<{ ok: boolean; error?: string }>,
    iterations: number | null,
  ): Promise<void> {
    this.clearViews(iterations);
    this.heatmap.privileged = this.setup.privileged;
    this.runModel = this.setup.planned()?.model ?? null;
    this.student.n = this.setup.rollouts;
    this.schedule(true);
    const r = await call();
    if (!r.ok && r.error) this.runFailed(r.error, 'other');
  }

  /** Empties the views for a new run or pretraining (of `iterations`, when known) and clears the last one's alerts. */
  private clearViews(iterations: number | null): void {
    alerts.clear('resume-offer');
    alerts.clear('run-failed');
    this.view(null);
    this.state = emptyState();
    this.rendered = unrendered();
    this.iterations = iterations;
  }

  /** Starts a pretraining; the views start empty, like a new run's. */
  private async startPretrain(req: PretrainRequest): Promise<{ ok: boolean; error?: string }> {
    this.clearViews(null);
    this.schedule(true);
    return this.engine.pretrain(req);
  }

  private async resumeRun(name: string): Promise<void> {
    if (this.phase === 'running' || this.phase === 'starting' || this.phase === 'paused') {
      alerts.show(
        'warn',
        this.job === 'pretrain' ? 'A pretraining is under way' : 'A run is active',
        `Stop the current ${this.job === 'pretrain' ? 'pretraining' : 'run'} before resuming a run.`,
      );
      return;
    }
    const init = await this.engine.init();
    if (!init.ok) {
      alerts.show('error', 'WebGPU is not usable', init.error ?? '');
      return;
    }
    const cfg = await this.engine.checkpointConfig(name);
    if (cfg) this.setup.showConfig(cfg);
    await this.startRun(() => this.engine.start({ resumeFrom: name }), cfg?.iterations ?? null);
  }

  private onMessages(msgs: WorkerMessage[]): void {
    for (const m of msgs) {
      switch (m.type) {
        case 'run': {
          const ev = unpackEvent(m.event);
          applyEvent(this.state, ev);
          if (ev.type === 'progress' && ev.secondsPerWork !== undefined && this.runModel)
            storePace(this.adapter, this.runModel, ev.secondsPerWork);
          break;
        }
        case 'phase':
          this.setPhase(m.phase, m.job);
          if (m.phase === 'failed' && m.error && m.errorKind !== 'device-lost')
            this.runFailed(m.error, m.errorKind ?? 'other');
          break;
        case 'pretrained':
          this.pretrain.showSummary(m.summary, m.saved);
          break;
        case 'download':
          this.setup.showDownload(m.progress.loaded >= m.progress.total && m.progress.total > 0 ? null : m.progress);
          break;
        case 'device-lost':
          this.job = m.job;
          this.deviceLost(m.message, m.lastCheckpoint);
          break;
        case 'checkpoints':
          this.checkpoints.render(m.list);
          break;
        case 'notice':
          applyEvent(this.state, { type: 'log', level: m.level, message: m.message });
          break;
      }
    }
    this.schedule(false);
  }

  private setPhase(phase: RunPhase, job: JobKind): void {
    this.phase = phase;
    this.job = job;
    document.body.dataset.phase = phase;
    document.body.dataset.job = job;
    this.setup.setPhase(phase, job);
    this.pretrain.setPhase(phase, job);
    this.checkpoints.setBusy(phase === 'running' || phase === 'paused' || phase === 'starting' || phase === 'stopping');
    if (phase !== 'starting') this.setup.showDownload(null);
    this.renderProgress();
  }

  private runFailed(message: string, kind: string): void {
    if (this.job === 'pretrain') {
      const hint =
        kind === 'out-of-memory' ? ' Try a smaller hidden width, fewer layers, a smaller batch or a shorter seq.' : '';
      alerts.show(
        'error',
        kind === 'out-of-memory' ? 'Out of GPU memory' : 'The pretraining stopped with an error',
        `${message}${hint} Stored checkpoints are unchanged.`,
        [],
        'run-failed',
      );
      return;
    }
    const latest = this.checkpoints.latest;
    const resume = latest
      ? [{ label: `Resume from '${latest.name}'`, run: () => void this.resumeRun(latest.name), primary: true }]
      : [];
    if (kind === 'out-of-memory') {
      alerts.show(
        'error',
        'Out of GPU memory',
        `${message} Try a smaller model, LoRA policies, a smaller micro-batch or fewer turn tokens.`,
        resume,
        'run-failed',
      );
    } else {
      alerts.show('error', 'The run stopped with an error', message, resume, 'run-failed');
    }
  }

  private deviceLost(reason: string, last: string | null): void {
    status.textContent = 'GPU device lost';
    status.className = 'status error';
    // The run's own error (a failed read-back...) is this loss; one message says it.
    alerts.clear('run-failed');
    const actions = last
      ? [{ label: `Resume from checkpoint '${last}'`, run: () => void this.resumeRun(last), primary: true }]
      : [];
    alerts.show(
      'error',
      'The GPU device was lost',
      `The browser lost the GPU device (${reason}); ` +
        'this happens after a driver reset, a GPU hang or memory pressure. ' +
        (this.job === 'pretrain'
          ? 'The pretraining was cut short and stored nothing; stored checkpoints are unchanged. ' +
            'Start it again when ready.'
          : last
            ? 'The run can continue from its last checkpoint.'
            : 'There is no unfinished run with a checkpoint to resume; start a new run when ready.'),
      actions,
      'device-lost',
    );
    void this.engine.init().then((r) => {
      if (r.ok && r.info) {
        status.textContent = `${r.info.description || r.info.vendor}${r.info.isCpu ? ' (software)' : ''} · new device`;
        status.className = 'status ok';
      }
    });
  }

  private schedule(force: boolean): void {
    if (force) this.lastCharts = 0;
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  private renderProgress(): void {
    const el = document.getElementById('progress')!;
    const plan = this.state.progress ? null : this.setup?.planned();
    const before = plan ? beforeRunText(plan.config, storedPace(this.adapter, plan.model)) : '';
    el.innerHTML = renderProgress(this.state.progress, this.phase, this.iterations, Date.now(), before).text;
    this.rendered.progress = this.state.version.progress;
  }

  private render(): void {
    // Progress is always the page's own run; the views show the viewed run, if any.
    if (this.rendered.progress !== this.state.version.progress) this.renderProgress();
    const s = this.viewing?.state ?? this.state;
    const v = s.version;
    const tab = this.tabs.current;
    if (tab === 'examiner' && this.rendered.examiner !== v.questions) {
      this.examiner.render(s.questions);
      this.rendered.examiner = v.questions;
    }
    if (tab === 'student' && this.rendered.student !== v.rollouts) {
      this.student.render(s.rollouts);
      this.rendered.student = v.rollouts;
    }
    const heatKey = `${v.rollouts}/${v.questions}`;
    if (tab === 'heatmap' && this.rendered.heatmap !== heatKey) {
      this.heatmap.render(s.rollouts, s.questions);
      this.rendered.heatmap = heatKey;
    }
    if (tab === 'charts' && this.rendered.charts !== v.metrics) {
      const now = performance.now();
      if (now - this.lastCharts > 500) {
        this.charts.render(s.series);
        this.rendered.charts = v.metrics;
        this.lastCharts = now;
      } else setTimeout(() => this.schedule(false), 500);
    }
    if (tab === 'pretrain' && this.rendered.pretrain !== this.state.version.metrics) {
      this.pretrain.render(this.state.series.get('pretrain/loss'));
      this.rendered.pretrain = this.state.version.metrics;
    }
    if (tab === 'log' && this.rendered.log !== v.logs) {
      document.getElementById('panel-log')!.innerHTML = html`<h3 class="sr-only">Run log</h3>${renderLog(s.logs)}`.text;
      this.rendered.log = v.logs;
    }
    // Tab badges: how much each view holds.
    setBadge('examiner', s.questions.length);
    setBadge('student', s.rollouts.length);
  }
}

/** The seconds per unit of work the last run of `model` measured on `adapter` (run-estimate.ts), if any. */
function storedPace(adapter: string, model: string): number | undefined {
  try {
    const v = Number(localStorage.getItem(`piplay.pace|${adapter}|${model}`));
    return v > 0 && Number.isFinite(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function storePace(adapter: string, model: string, secondsPerWork: number): void {
  try {
    localStorage.setItem(`piplay.pace|${adapter}|${model}`, String(secondsPerWork));
  } catch {
    /* storage off or full: the next run shows no time before it starts */
  }
}

function setBadge(tab: string, n: number): void {
  const b = document.querySelector<HTMLElement>(`[data-tab="${tab}"]`);
  if (!b) return;
  let span = b.querySelector<HTMLElement>('.count');
  if (!span) {
    span = document.createElement('span');
    span.className = 'count';
    b.append(span);
  }
  span.textContent = n ? String(n) : '';
}

boot().catch((err: unknown) => fatal('piplay failed to start', (err as Error).message));
