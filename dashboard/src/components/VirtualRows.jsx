import { useEffect, useRef, useState } from 'preact/hooks';

const ROW = 36;       // px; every row has this height (style.css .vrow)
const OVERSCAN = 8;

/**
 * A table whose body renders only the rows in view (plus a few): a list of thousands
 * costs the DOM of about forty. ``columns``: [{key, label, width, render(item)}].
 * Rows carry aria-rowindex so screen readers know where they are in the whole list.
 */
export function VirtualRows({ items, columns, label, rowKey }) {
  const box = useRef(null);
  const [top, setTop] = useState(0);
  const [height, setHeight] = useState(600);

  useEffect(() => {
    const el = box.current;
    const measure = () => setHeight(el.clientHeight || 600);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
  const last = Math.min(items.length, Math.ceil((top + height) / ROW) + OVERSCAN);
  const template = columns.map((c) => c.width || '1fr').join(' ');

  return (
    <div class="vtable" role="table" aria-label={label} aria-rowcount={items.length + 1}>
      <div class="vhead" role="row" aria-rowindex={1} style={{ gridTemplateColumns: template }}>
        {columns.map((c) => <span role="columnheader" key={c.key}>{c.label}</span>)}
      </div>
      {/* Focusable, so that arrow keys and Page Down scroll the rows not yet in the page. */}
      <div class="vbody" ref={box} tabIndex={0} onScroll={(e) => setTop(e.currentTarget.scrollTop)} role="rowgroup">
        <div style={{ height: `${items.length * ROW}px`, position: 'relative' }}>
          {items.slice(first, last).map((item, i) => (
            <div class="vrow" role="row" key={rowKey(item)} aria-rowindex={first + i + 2}
              style={{ top: `${(first + i) * ROW}px`, gridTemplateColumns: template }}>
              {columns.map((c) => <span role="cell" key={c.key}>{c.render(item)}</span>)}
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}
