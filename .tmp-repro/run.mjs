import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { writeFileSync } from 'node:fs';
await build({ entryPoints: ['/work/wt-fnui/.tmp-repro/entry.tsx'], bundle: true, outfile: '/work/wt-fnui/.tmp-repro/out.js', format: 'esm', jsx: 'automatic', jsxImportSource: 'preact', absWorkingDir: '/work/wt-fnui', nodePaths: ['/work/wt-fnui/node_modules'], minify: true, target: ['chrome111'], define: { 'process.env.NODE_ENV': '"development"' } });
writeFileSync('/work/wt-fnui/.tmp-repro/index.html', '<meta http-equiv="Content-Security-Policy" content="style-src \'self\' file:; script-src \'self\' file:"><link rel="stylesheet" href="/work/wt-fnui/ui/src/styles.css"><main class="page"><div id="root" class="function-page"></div></main></div><script type="module" src="out.js"></script>');
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--allow-file-access-from-files'] });
const page = await b.newPage();
page.on('console', (m) => console.log('console', m.text()));
page.on('pageerror', (e) => console.log('pageerror', e));
await page.goto('file:///work/wt-fnui/.tmp-repro/index.html');
const ed = page.getByLabel('src', { exact: true });
await ed.waitFor();
await ed.click();
await page.keyboard.press('Control+End');
for (const ch of process.argv[2] ?? '\npli') { console.log('CH', JSON.stringify(ch)); await Promise.race([page.keyboard.type(ch), new Promise((_, r) => setTimeout(() => r(new Error('hang')), 5000))]); await page.waitForTimeout(300); }
console.log(await page.locator('.cm-tooltip-autocomplete').count(), 'tooltip');
await b.close();
