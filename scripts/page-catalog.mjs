// SPDX-License-Identifier: MIT
// The catalog as the page's worker fetches it: the same cards and presets, every figure the
// engine reads, without the prose it does not (each card's `sources` and `notes`, its offers'
// and market limits' notes, each
// preset's `source`, `params_published_source` and `notes`). Those are most of the files'
// bytes and none of the numbers; the full files sit beside these in the site (catalog/) and in
// the repository, where each figure's source is read.
//   node scripts/page-catalog.mjs catalog OUT_DIR
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';

const [from, to] = process.argv.slice(2);
await mkdir(to, { recursive: true });
const gpus = JSON.parse(await readFile(path.join(from, 'gpus.json'), 'utf8'));
for (const card of gpus.gpus) {
  delete card.sources;
  delete card.notes;
  // An offer's and a market limit's notes are prose too; their sources stay, since an answer
  // names the offer it priced with (cost.offer.source).
  for (const offer of card.offers ?? []) delete offer.note;
  if (card.markets) {
    delete card.markets.note;
    delete card.markets.source;
  }
}
const models = JSON.parse(await readFile(path.join(from, 'models.json'), 'utf8'));
for (const preset of models.models) {
  delete preset.source;
  delete preset.params_published_source;
  delete preset.notes;
}
await writeFile(path.join(to, 'gpus.json'), JSON.stringify(gpus));
await writeFile(path.join(to, 'models.json'), JSON.stringify(models));
