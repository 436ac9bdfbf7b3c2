// The environment's public surface: corpus, retrieval, tool tags, EM, prompts, the fictional world.
export * from './corpus.ts';
export * from './bm25.ts';
export * from './tags.ts';
export * from './em.ts';
export * from './prompts.ts';
export * from './random.ts';
export * from './world.ts';
