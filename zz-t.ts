import { readFileSync } from 'node:fs';
import { tokenizerFromJson } from './src/model/tokenizer.ts';
const tj = JSON.parse(readFileSync('public/models/piplay-tiny/tokenizer.json', 'utf8'));
const tc = JSON.parse(readFileSync('public/models/piplay-tiny/tokenizer_config.json', 'utf8'));
let t0 = performance.now();
await tokenizerFromJson(tj, tc, { where: 'x' });
console.log('plain load', performance.now() - t0);
t0 = performance.now();
try { await tokenizerFromJson(tj, { ...tc, chat_template: '{% for i in range(100000000) %}x{% endfor %}' }, { where: 'x' }); } catch (e) { console.log((e as Error).message); }
console.log('loop', performance.now() - t0);
