// Invented words for the fictional encyclopedia, built from syllables.
//
// Every word the generator hands out is unique in the world, and no word is a substring of another
// (so no name hides inside another name: BM25 and the "answer not in question" check stay clean). Words
// that happen to be real names from a small list are refused. Words have 5 to 10 letters, mostly two
// syllables plus an ending, so that a small model's tokenizer spends few tokens on them.

import type { Rng } from '../random.ts';

const ONSETS = [
  'b',
  'd',
  'f',
  'g',
  'k',
  'l',
  'm',
  'n',
  'p',
  'r',
  's',
  't',
  'v',
  'z',
  'th',
  'br',
  'dr',
  'kr',
  'tr',
  'vr',
  'gl',
  'st',
  'sk',
  'h',
];
const NUCLEI = ['a', 'e', 'i', 'o', 'u', 'a', 'e', 'o', 'i', 'ae', 'ei', 'ou'];
const CODAS = ['', '', '', 'n', 'r', 'l', 's', 'th', 'm', 'nd', 'rn', 'x', 'lt'];

/** Word endings that give each kind of name a flavour. */
export type WordStyle = 'given' | 'family' | 'city' | 'country' | 'org' | 'work';
const ENDINGS: Record<WordStyle, readonly string[]> = {
  given: ['a', 'o', 'en', 'is', 'ric', 'wyn', 'et', 'an', 'el', 'ius'],
  family: ['son', 'ard', 'enko', 'vik', 'ley', 'ani', 'ez', 'ier', 'ow'],
  city: ['mere', 'holt', 'var', 'ost', 'ford', 'wick', 'pol', 'heim', 'ene'],
  country: ['ia', 'ar', 'enne', 'ovia', 'esh', 'una', 'eth'],
  org: ['ine', 'ant', 'ium', 'or', 'ell', 'ade'],
  work: ['', '', 'ion', 'eth', 'ara', 'yn'],
};

/** Real names (and a few English words) that the syllables could spell; such words are refused. */
const REAL = new Set(
  (
    'mali peru chad oman togo cuba fiji iran iraq laos niger nepal benin gabon sudan tonga samoa malta kenya ghana ' +
    'rome paris lima oslo riga baku doha kiev kyiv sofia milan turin dublin berlin boston dallas denver delhi tokyo ' +
    'kyoto osaka seoul lagos cairo rabat tunis dakar sparta athens troy tula perm kazan minsk vilnius tallinn ' +
    'maria anna elena mary john david peter paul sara lena nora tara dina mila vera ella lisa rosa diana laura ' +
    'karen helen ellen susan linda brenda donna sandra monica derek kevin simon brian dylan trevor morgan ' +
    'madrid lisbon vienna prague zurich geneva bern hamburg munich dresden london manchester leeds york ' +
    'florence venice naples genoa verona sienna pisa nantes lyon nice lille toulouse bordeaux marseille ' +
    'israel russia serbia bosnia latvia zambia gambia namibia bolivia austria somalia nigeria algeria tunisia ' +
    'syria libya india china japan korea sweden norway finland poland brazil chile mexico canada panama ' +
    'stone brand river lemon melon salmon dragon turban kirsten thorn storm brother sister mother father ' +
    'london hollander sudanese tarzan tristan isolde merlin arthur lancelot gawain morgana nimue percival'
  ).split(/\s+/),
);

export class NameForge {
  private readonly used: string[] = [];
  private readonly usedSet = new Set<string>();

  constructor(private readonly rng: Rng) {}

  /** Reserves a word (e.g. one chosen by hand) so that no invented word collides with it. */
  reserve(word: string): void {
    const w = word.toLowerCase();
    this.used.push(w);
    this.usedSet.add(w);
  }

  /** A new capitalised word in the given style, unique and substring-free against every earlier word. */
  word(style: WordStyle): string {
    for (let attempt = 0; attempt < 10_000; attempt++) {
      const w = this.candidate(style, attempt > 2000 ? 1 : 0);
      if (this.acceptable(w)) {
        this.reserve(w);
        return w[0]!.toUpperCase() + w.slice(1);
      }
    }
    throw new Error(`NameForge: ran out of ${style} names (${this.used.length} words in use)`);
  }

  private candidate(style: WordStyle, extra: number): string {
    const syllables = (this.rng.chance(0.25) ? 1 : 2) + extra;
    let w = '';
    for (let i = 0; i < syllables; i++) {
      w += (i === 0 || this.rng.chance(0.85) ? this.rng.pick(ONSETS) : '') + this.rng.pick(NUCLEI);
      if (i === syllables - 1 || this.rng.chance(0.3)) w += this.rng.pick(CODAS);
    }
    const ending = this.rng.pick(ENDINGS[style]);
    if (ending && /[aeiouy]$/.test(w) && /^[aeiouy]/.test(ending)) w = w.slice(0, -1);
    return w + ending;
  }

  private acceptable(w: string): boolean {
    if (w.length < 5 || w.length > 10) return false;
    // No tripled letters, doubled vowels, long clusters, or a repeated chunk ("meimei").
    if (
      /(.)\1\1/.test(w) ||
      /([aeiou])\1/.test(w) ||
      /[^aeiouy]{4}/.test(w) ||
      /[aeiouy]{3}/.test(w) ||
      /(..+)\1/.test(w)
    )
      return false;
    if (REAL.has(w) || this.usedSet.has(w)) return false;
    for (const u of this.used) if (u.includes(w) || w.includes(u)) return false;
    return true;
  }
}
