// The fictional-encyclopedia world: generator, knowledge-graph look-ups, multi-hop questions and the
// held-out eval set. Implementation in ./world/.

export { generateWorld, DEFAULT_WORLD_SIZE, type WorldSettings } from './world/generate.ts';
export { WorldIndex } from './world/index.ts';
export { entityCounts, OCCUPATIONS, ORG_KINDS } from './world/entities.ts';
export { shortName } from './world/render.ts';
export { worldQcp } from './world/qcp.ts';
export {
  auditQuestion,
  readQuestion,
  QUESTION_VERDICTS,
  type QuestionAudit,
  type QuestionReading,
  type QuestionVerdict,
} from './world/audit.ts';
export {
  STEPS,
  stepDef,
  follow,
  answersOfChain,
  valueText,
  generateQuestion,
  generatePhrasedQuestion,
  makeEvalSet,
  evalSetToJsonl,
  parseEvalSetJsonl,
  type StepId,
  type StepDef,
  type PathStep,
  type WorldQuestion,
  type QuestionOptions,
  type EvalSetOptions,
} from './world/questions.ts';
export {
  ENTITY_TYPES,
  YEAR_PREDICATES,
  isYearPredicate,
  type Entity,
  type EntityType,
  type LinkPredicate,
  type YearPredicate,
  type Predicate,
  type Relation,
  type World,
} from './world/types.ts';
export {
  YARDSTICK_SEEDS,
  YARDSTICK_SPLITS,
  yardstickQuestions,
  yardstickWorld,
  type HeldOutQuestion,
  type YardstickSplit,
} from './world/yardstick.ts';
