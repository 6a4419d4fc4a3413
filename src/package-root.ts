import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Postline's own directory (where package.json and migrations/ are), found by walking up from
 * this module: the same code runs from src/ (tsx, the tests) and from the bundled build's
 * dist/chunks/ (docs/decisions/0049-start-up-cpu.md), at different depths.
 */
export const PACKAGE_ROOT = (() => {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'migrations'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no Postline package above ${fileURLToPath(import.meta.url)}`);
  }
})();
