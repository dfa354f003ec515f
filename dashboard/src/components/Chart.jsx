/**
 * A live line chart of recent samples, drawn as SVG: ``series`` is
 * [{label, values: [number], color}] over the same instants. For screen readers it is
 * one image whose name says each series' latest and highest value; the same figures
 * are printed beside it.
 */
const W = 320;
const H = 90;

function fmt(v, digits) { return Number(v).toFixed(digits); }

export function Chart({ title, unit, series, digits = 1, max: fixedMax, testId }) {
  const count = Math.max(0, ...series.map((s) => s.values.length));
  const top = Math.max(fixedMax || 0, ...series.flatMap((s) => s.values), 1e-9);
  const x = (i, n) => (n <= 1 ? W : (i / (n - 1)) * W);
  const y = (v) => H - (v / top) * (H - 4) - 2;
  const summary = series.map((s) => {
    const last = s.values.length ? s.values[s.values.length - 1] : 0;
    const peak = s.values.length ? Math.max(...s.values) : 0;
    return `${s.label} ${fmt(last, digits)} ${unit} now, at most ${fmt(peak, digits)}`;
  }).join('; ');
  return (
    <figure class="chart" data-testid={testId}>
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${count ? summary : 'no sample yet'}`}
        preserveAspectRatio="none" data-samples={count}>
        <line x1="0" y1={H - 1} x2={W} y2={H - 1} class="axis" />
        {series.map((s) => (
          <polyline fill="none" stroke={s.color} stroke-width="2" vector-effect="non-scaling-stroke"
            points={s.values.map((v, i) => `${x(i, s.values.length).toFixed(1)},${y(v).toFixed(1)}`).join(' ')} />
        ))}
      </svg>
      <p class="chart-legend" aria-hidden="true">
        {series.map((s) => (
          <span><i style={{ background: s.color }} /> {s.label}: {s.values.length ? fmt(s.values[s.values.length - 1], digits) : '–'} {unit}</span>
        ))}
        <span class="hint">scale 0–{fmt(top, digits)} {unit}</span>
      </p>
    </figure>
  );
}

/** Keep the last ``keep`` of ``list`` with ``value`` appended. */
export function pushed(list, value, keep = 60) {
  const out = list.concat([value]);
  return out.length > keep ? out.slice(out.length - keep) : out;
}
