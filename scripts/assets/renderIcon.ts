/**
 * Renders media/icon.svg to the 128×128 PNG the Marketplace needs (media/icon.png) with Debian's Chromium, so the
 * PNG is always the SVG's picture. Run after editing the SVG: node --import tsx scripts/assets/renderIcon.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser } from '../../test/host/browser';

const media = join(__dirname, '..', '..', 'media');

async function main(): Promise<void> {
  const svg = readFileSync(join(media, 'icon.svg'), 'utf8');
  const browser = await launchBrowser();
  try {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 128, height: 128 });
    await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
    const png = await page.locator('svg').screenshot({ omitBackground: true });
    writeFileSync(join(media, 'icon.png'), png);
    console.log(`media/icon.png: ${png.length} bytes`);
  } finally {
    await browser.close();
  }
}
void main();
