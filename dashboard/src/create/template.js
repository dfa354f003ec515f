// Where in a capsule template's text a path the API names lies
// ("spec.containers[1].image" -> the line of that member's image), so the page can
// show and select it. A close reading, not a parser: the API has parsed the template.

/** "spec.containers[1].image" -> ['spec', 'containers', 1, 'image']. */
export function pathSteps(path) {
  const steps = [];
  for (const part of path.split('.')) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) return steps;
    if (m[1]) steps.push(m[1]);
    for (const i of m[2].matchAll(/\[(\d+)\]/g)) steps.push(Number(i[1]));
  }
  return steps;
}

const indent = (line) => line.length - line.trimStart().length;
const keyAt = (line, key) => new RegExp(`(^|[\\s{,\\[-])["']?${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}["']?\\s*:`).test(line);

/**
 * The line (1-based) of ``path`` in ``text``, or null. Keys are found in order
 * below the previous step; an index counts the list's items (lines starting with
 * "- " or "{" at the first item's indent).
 */
export function lineOf(text, path) {
  const lines = text.split('\n');
  let at = 0;
  let found = false;
  const steps = pathSteps(path);
  for (let s = 0; s < steps.length; s += 1) {
    const step = steps[s];
    if (typeof step === 'string') {
      const from = found ? at : 0;
      const i = lines.findIndex((l, n) => n >= from && keyAt(l, step));
      if (i < 0) return found ? at + 1 : null;
      at = i; found = true;
    } else {
      let items = [];
      let depth = null;
      for (let n = at + 1; n < lines.length; n += 1) {
        const t = lines[n].trimStart();
        if (!t) continue;
        if (depth !== null && indent(lines[n]) < depth) break;
        if (t.startsWith('- ') || t.startsWith('{')) {
          if (depth === null) depth = indent(lines[n]);
          if (indent(lines[n]) === depth) items.push(n);
        }
      }
      if (step >= items.length) return at + 1;     // a flow list on one line, say
      at = items[step];
      const next = steps[s + 1];
      if (typeof next === 'string' && keyAt(lines[at], next)) s += 1;   // "- image: x"
    }
  }
  return found ? at + 1 : null;
}

/** The path a refusal names: 'spec.containers[0].image', or a YAML error's line. */
export function refusalPlace(message) {
  const field = /field '([^']+)'/.exec(message || '');
  const line = /at line (\d+), column (\d+)/.exec(message || '');
  return { path: field ? field[1] : null, line: line ? Number(line[1]) : null };
}
