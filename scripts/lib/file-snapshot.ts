import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Every file and folder under a root, left-out folder names aside: files with their modification
 * time, folders with 0 (their own time changes with their content, which their files already show).
 */
export type FileSnapshot = Map<string, number>;

export async function snapshotFiles(root: string, skipFolders: readonly string[] = []): Promise<FileSnapshot> {
  const snapshot: FileSnapshot = new Map();
  const visit = async (folder: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (!entry.isDirectory()) {
        snapshot.set(path, (await lstat(path)).mtimeMs);
      } else if (!skipFolders.includes(entry.name)) {
        snapshot.set(path, 0);
        await visit(path);
      }
    }
  };
  await visit(root);
  return snapshot;
}

/** Paths created, modified or deleted between two snapshots of the same root. */
export function changedFiles(before: FileSnapshot, after: FileSnapshot): string[] {
  const paths = new Set([...before.keys(), ...after.keys()]);
  return [...paths].filter((path) => before.get(path) !== after.get(path)).sort();
}
