/**
 * Where the `engram` command loads code it does not ship (AI SDK provider packages, `engram/llama`):
 * from where the command itself is installed, then from the user's `$ENGRAM_HOME/node_modules`;
 * never from the working directory. A project directory is not trusted (a clone is enough to run
 * `engram` in it): its `node_modules` is whoever wrote the repository, and a provider package
 * runs with the user's API key in its environment.
 * @module
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** The user's own package directory: `npm install --prefix $ENGRAM_HOME <package>` fills it. */
export function userModulesDir(home: string): string {
  return join(home, "node_modules");
}

/** What the error of a provider package that is found in neither place says to run. */
export function installHint(home: string): (packageName: string) => string {
  return (name) =>
    `install it where engram is installed (npm install -g ${name}, for a global engram) or in your ENGRAM_HOME ` +
    `(npm install --prefix ${home} ${name}); a project's own node_modules is never loaded`;
}

/** The entry file of the package `name` installed in the `node_modules` directory `dir` itself,
 * else `undefined`. Only `dir` is searched: Node's lookup would go on into the `node_modules` of
 * every directory above it (`/tmp/node_modules` for an ENGRAM_HOME under `/tmp`). */
function entryIn(dir: string, name: string): string | undefined {
  if (!existsSync(join(dir, name, "package.json"))) return undefined;
  try {
    return createRequire(join(dir, "engram.js")).resolve(name);
  } catch {
    return undefined;
  }
}

/** Imports a package by name as the command does (see the module documentation). A package found
 * in neither place rejects with the error of the import from the command's own location. */
export function commandImporter(home: string): (name: string) => Promise<unknown> {
  return async (name) => {
    try {
      return await import(name);
    } catch (e) {
      const entry = entryIn(userModulesDir(home), name);
      if (entry === undefined) throw e;
      return import(pathToFileURL(entry).href);
    }
  };
}
