/**
 * Where a worker thread's script is: the compiled file next to the module that starts it, or,
 * when that module runs from the TypeScript sources (the tests), the build's copy of it
 * (`npm test` builds first). Node runs a thread's script as JavaScript only.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * `from` is the starting module's import.meta.url, two folders deep: in `folder` (`src/render`,
 * say) or in its build (`dist/src/render`).
 */
export function threadScript(from: string, folder: string, file: string): URL {
  const beside = new URL(`./${file}`, from);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL(`../../dist/${folder}/${file}`, from);
}
