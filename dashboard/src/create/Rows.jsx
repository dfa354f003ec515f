/**
 * Repeating rows of a form (a container's networks, its mounts): each row a fieldset
 * whose legend numbers it, with a Remove button; an Add button below. ``fields``:
 * [{key, label, placeholder, list}]; ``invalidRow``: the row a refusal named, and
 * ``invalidKey`` its input (null: all of the row's).
 */
export function Rows({ legend, noun, rows, fields, onChange, invalidRow, invalidKey, describedBy, blank }) {
  const set = (i, key, value) => onChange(rows.map((r, j) => (j === i ? { ...r, [key]: value } : r)));
  return (
    <fieldset class="rows">
      <legend>{legend}</legend>
      {rows.map((row, i) => {
        const bad = invalidRow === i;
        return (
          <fieldset class="row" key={i} aria-invalid={bad ? 'true' : undefined}>
            <legend>{noun} {i + 1}</legend>
            {fields.map((f) => {
              const marked = bad && (!invalidKey || invalidKey === f.key);
              return (
              <label key={f.key}>{f.label}
                <input value={row[f.key]} placeholder={f.placeholder} list={f.list}
                  inputMode={f.inputMode} aria-label={`${noun} ${i + 1} ${f.label}`}
                  aria-invalid={marked ? 'true' : undefined} aria-describedby={marked ? describedBy : undefined}
                  onInput={(e) => set(i, f.key, e.currentTarget.value)} />
              </label>
              );
            })}
            <button type="button" onClick={() => onChange(rows.filter((_, j) => j !== i))}
              aria-label={`Remove ${noun.toLowerCase()} ${i + 1}`}>Remove</button>
          </fieldset>
        );
      })}
      <button type="button" onClick={() => onChange([...rows, { ...blank }])}>Add a {noun.toLowerCase()}</button>
    </fieldset>
  );
}
