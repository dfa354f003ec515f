/** Used against total as a meter (role=meter, its text read out); total < 0: no limit. */
export function Bar({ label, used, total, unit, digits = 0 }) {
  const unlimited = total < 0;
  const share = total > 0 ? Math.min(1, used / total) : 0;
  const level = share > 0.9 ? 'high' : share > 0.7 ? 'mid' : 'low';
  const shown = Number(used).toFixed(digits);
  const text = unlimited ? `${label}: ${shown} ${unit} used, no limit`
    : `${label}: ${shown} of ${total} ${unit} used`;
  return (
    <div class="bar-row">
      <span class="bar-label">{label}</span>
      <div class={`bar bar-${level}`} role="meter" aria-label={text} aria-valuemin={0}
        aria-valuemax={unlimited ? undefined : total} aria-valuenow={used} aria-valuetext={text}>
        <div style={{ width: `${(share * 100).toFixed(1)}%` }} />
      </div>
      <span class="bar-text">{shown} / {unlimited ? 'no limit' : total} {unit}</span>
    </div>
  );
}
