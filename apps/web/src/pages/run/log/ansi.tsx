// ANSI colours of a log line as spans with theme-aware classes (run.css); 256-colour and true-colour codes as
// CSSOM colours (allowed by the CSP, unlike style attributes in markup).
import Anser from 'anser';
import { memo } from 'react';

const ESC = '\u001b';

/** A line without its escape codes (for search and copy). */
export function plainText(line: string): string {
  return line.includes(ESC) ? Anser.ansiToText(line) : line;
}

function colourOf(value: string | null, truecolor: string | null): { cls?: string; rgb?: string } {
  if (!value) return {};
  if (value === 'ansi-truecolor') return truecolor ? { rgb: `rgb(${truecolor})` } : {};
  if (value.startsWith('ansi-')) return { cls: value };
  return { rgb: `rgb(${value})` };
}

export const AnsiLine = memo(function AnsiLine({ text }: { text: string }) {
  if (!text.includes(ESC)) return <>{text}</>;
  const parts = Anser.ansiToJson(text, { use_classes: true, remove_empty: true });
  return (
    <>
      {parts.map((p, i) => {
        const fg = colourOf(p.fg, p.fg_truecolor);
        const bg = colourOf(p.bg, p.bg_truecolor);
        const classes = [fg.cls && `${fg.cls}-fg`, bg.cls && `${bg.cls}-bg`, ...p.decorations.map((d) => `ansi-${d}`)]
          .filter(Boolean)
          .join(' ');
        if (!classes && !fg.rgb && !bg.rgb) return <span key={i}>{p.content}</span>;
        return (
          <span
            key={i}
            className={classes || undefined}
            style={fg.rgb || bg.rgb ? { color: fg.rgb, backgroundColor: bg.rgb } : undefined}
          >
            {p.content}
          </span>
        );
      })}
    </>
  );
});
