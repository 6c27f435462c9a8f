// Every folder says what lives there (issue 20): each folder under src/, shaders/, test/, bench/, tools/, public/
// and examples/ that holds a file, directly or in a folder below it, has a README.md. The files are git's: those it
// tracks and the new ones it does not ignore (`git ls-files --cached --others --exclude-standard`), so ignored
// output (node_modules, .tmp, dist, a bench's own install prefix) is never asked for a README, and a new folder is
// asked for one before its first commit. No folder is excluded.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const ROOTS = ['src', 'shaders', 'test', 'bench', 'tools', 'public', 'examples'];

/** Every folder under `roots` that holds one of `files` (repository-relative, `/`-separated), itself or below. */
export function foldersOf(files: string[], roots: string[] = ROOTS): string[] {
  const folders = new Set<string>();
  for (const file of files) {
    const parts = file.split('/');
    if (parts.length < 2 || !roots.includes(parts[0])) continue;
    for (let i = 1; i < parts.length; i++) folders.add(parts.slice(0, i).join('/'));
  }
  return [...folders].sort();
}

/** The folders of `files` for which `hasReadme` says no. */
export function foldersWithoutReadme(files: string[], hasReadme: (folder: string) => boolean, roots: string[] = ROOTS): string[] {
  return foldersOf(files, roots).filter((folder) => !hasReadme(folder));
}

/** The files git tracks or would add under `roots`, as they are on disk now (a file deleted but still tracked is left out). */
function projectFiles(roots: string[] = ROOTS): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...roots], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return out.split('\0').filter((file) => file !== '' && existsSync(file));
}

describe('folder README', () => {
  const files = projectFiles();

  it('finds the folders it checks (the scan is not empty)', () => {
    const folders = foldersOf(files);
    expect(folders.length).toBeGreaterThan(40);
    expect(folders).toEqual(expect.arrayContaining(ROOTS));
    expect(folders).toContain('src/gpu/kernels');
    expect(folders).toContain('test/fixtures');
  });

  it('every folder that holds a file has a README.md', () => {
    expect(foldersWithoutReadme(files, (folder) => existsSync(`${folder}/README.md`))).toEqual([]);
  });

  it('a folder counts when it holds files only in folders below it, and files outside the roots do not', () => {
    const planted = ['README.md', 'other/z.ts', 'src/a/README.md', 'src/a/x.ts', 'src/b/c/y.ts', 'test/d/e/data.json'];
    const has = (folder: string) => planted.includes(`${folder}/README.md`);
    expect(foldersWithoutReadme(planted, has)).toEqual(['src', 'src/b', 'src/b/c', 'test', 'test/d', 'test/d/e']);
  });
});
