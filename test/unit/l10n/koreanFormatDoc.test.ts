/**
 * The Korean documents against their English originals: docs/ko/session-format.md (the file format) and
 * docs/ko/doctor.md (the doctor, a section per finding kind). Each has the same sections in the same order (levels
 * and numbers, and a finding kind's name where a heading is one), every code block byte for byte, every code span of
 * the English text, links that lead somewhere, and Korean prose in each section. A change to an English document
 * that is not carried over fails here.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { KIND_ORDER } from '../../../src/store/doctor/findingKinds';

const ROOT = resolve(__dirname, '..', '..', '..');
/** The translated documents, by their name in docs/ and docs/ko/. */
const DOCUMENTS = ['session-format.md', 'doctor.md'];
const HANGUL = /[\uac00-\ud7a3]/u;

/** The text outside fenced code blocks, and the blocks themselves. */
function split(markdown: string): { prose: string; blocks: string[] } {
  const blocks: string[] = [];
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gmu, (block) => {
    blocks.push(block);
    return '';
  });
  return { prose, blocks };
}

/**
 * Each heading's level and its number (`8.4`, `12`, `(a)`), or its level alone for an unnumbered one; a heading that
 * is a name in lowercase words joined by hyphens (a finding kind: `dangling-tool-call`) keeps the name, since the
 * Korean page keeps it too.
 */
function headings(prose: string): string[] {
  return [...prose.matchAll(/^(#+) +(\d+(?:\.\d+)*\.?|\([a-z]\)|[a-z]+(?:-[a-z]+)+$)?/gmu)].map((m) => `${m[1]} ${m[2] ?? ''}`.trim());
}

/**
 * The code spans of `prose`, as Markdown reads them: a run of N backticks opens a span that the next run of exactly N
 * closes (so ``a `b` c`` is one span); a line break inside a span is a space (a translation may wrap elsewhere).
 */
function codeSpans(prose: string): Set<string> {
  const spans = new Set<string>();
  const runs = [...prose.matchAll(/`+/gu)];
  for (let i = 0; i < runs.length; i++) {
    const open = runs[i]!;
    let close = i + 1;
    while (close < runs.length && runs[close]![0].length !== open[0].length) close++;
    if (close === runs.length) continue;
    const end = runs[close]!;
    spans.add(
      prose
        .slice(open.index! + open[0].length, end.index)
        .replace(/\s+/gu, ' ')
        .trim(),
    );
    i = close;
  }
  return spans;
}

for (const name of DOCUMENTS) {
  const EN = join(ROOT, 'docs', name);
  const KO = join(ROOT, 'docs', 'ko', name);
  describe(`docs/ko/${name} (in Korean)`, () => {
    const en = split(readFileSync(EN, 'utf8'));
    const ko = split(existsSync(KO) ? readFileSync(KO, 'utf8') : '');

    if (name === 'doctor.md') {
      it('has a section for every finding kind the doctor reports (so the Korean page has one too)', () => {
        const sections = new Set(headings(en.prose));
        assert.deepEqual(
          KIND_ORDER.filter((kind) => !sections.has(`### ${kind}`)),
          [],
        );
      });
    }

    it('exists and has the English document’s sections, in order, at the same levels, numbers and kind names', () => {
      assert.ok(existsSync(KO), `${KO} is missing`);
      assert.deepEqual(headings(ko.prose), headings(en.prose));
    });

    it('has every code block of the English document, byte for byte', () => {
      assert.deepEqual(ko.blocks, en.blocks);
    });

    it('keeps every code span of the English document (names, columns, values are never translated)', () => {
      const missing = [...codeSpans(en.prose)].filter((span) => !codeSpans(ko.prose).has(span));
      assert.deepEqual(missing, []);
    });

    it('links only to files that exist (it lives one folder deeper than the English document)', () => {
      const targets = [...ko.prose.matchAll(/\]\(([^)\s]+)\)/gu)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/u.test(t));
      assert.ok(targets.length > 0);
      const broken = targets.filter((t) => t.startsWith('#') || !existsSync(join(dirname(KO), decodeURI(t.split('#')[0]!))));
      assert.deepEqual(broken, []);
    });

    it('is written in Korean: every section has Korean prose', () => {
      const sections = ko.prose.split(/^#+ .*$/mu).slice(1);
      assert.ok(sections.length > 0, 'no sections');
      const english = sections.map((text, i) => [i, text] as const).filter(([, text]) => text.trim() !== '' && !HANGUL.test(text));
      assert.deepEqual(
        english.map(([i]) => headings(ko.prose)[i]),
        [],
      );
    });
  });
}
