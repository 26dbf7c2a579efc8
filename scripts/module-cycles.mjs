#!/usr/bin/env node
// Fails when the top-level modules of a Rust crate under crates/ or bindings/ depend on each
// other in a cycle (madge checks the TypeScript). A module's dependencies are the
// `crate::<module>` paths its files name outside their `#[cfg(test)]` sections; a module is a
// top-level `src/<name>.rs` together with the files under `src/<name>/`.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;

/** The files of each top-level module of the crate whose sources are in `src`. */
function modulesOf(src) {
  const modules = new Map();
  const add = (name, file) => modules.set(name, [...(modules.get(name) ?? []), file]);
  const walk = (dir, name) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path, name);
      else if (entry.endsWith(".rs")) add(name, path);
    }
  };
  for (const entry of readdirSync(src)) {
    const path = join(src, entry);
    if (statSync(path).isDirectory()) walk(path, entry);
    else if (entry.endsWith(".rs") && entry !== "lib.rs" && entry !== "main.rs") add(basename(entry, ".rs"), path);
  }
  return modules;
}

/** The text of a file without its test sections (a `#[cfg(test)]` item to the end of the file,
 * the layout every file here follows). */
function withoutTests(text) {
  const at = text.indexOf("#[cfg(test)]");
  return at < 0 ? text : text.slice(0, at);
}

/** The cycles among `modules` (each as the names along it), found by depth-first search. */
function cycles(modules) {
  const deps = new Map();
  for (const [name, files] of modules) {
    const named = new Set();
    for (const file of files) {
      for (const m of withoutTests(readFileSync(file, "utf8")).matchAll(/\bcrate::([a-z_][a-z0-9_]*)/g)) {
        if (m[1] !== name && modules.has(m[1])) named.add(m[1]);
      }
    }
    deps.set(name, [...named].sort());
  }
  const found = [];
  const state = new Map();
  const stack = [];
  const visit = (name) => {
    state.set(name, "open");
    stack.push(name);
    for (const next of deps.get(name) ?? []) {
      if (state.get(next) === "open") found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(name, "done");
  };
  for (const name of [...deps.keys()].sort()) if (!state.has(name)) visit(name);
  return found;
}

let failed = false;
for (const group of ["crates", "bindings"]) {
  const dir = join(ROOT, group);
  if (!existsSync(dir)) continue;
  for (const crate of readdirSync(dir).sort()) {
    const src = join(dir, crate, "src");
    if (!existsSync(src)) continue;
    for (const cycle of cycles(modulesOf(src))) {
      failed = true;
      console.error(`${group}/${crate}: module cycle ${cycle.join(" -> ")}`);
    }
  }
}
if (failed) process.exit(1);
console.log("Rust module cycles: none");
