// Both dialects keep JSON in text columns. Repositories parse it on read and write JSON.stringify of the
// value, so callers see typed values and never the encoding. SQL NULL stays null (never the text "null").

/** A row as callers see it: each JSON column (a key of `Json`) holds its parsed value. */
export type Decoded<Row, Json> = { [K in keyof Row]: K extends keyof Json ? Json[K] : Row[K] };
/** A row or patch as stored: each JSON column present holds its text. */
export type Encoded<Row, Json> = {
  [K in keyof Row]: K extends keyof Json ? string | (null extends Json[K] ? null : never) : Row[K];
};

/** The codec of a table's JSON columns; `columns` names every key of `Json` (the compiler checks none is left out). */
export function jsonColumns<Json>(columns: { [K in keyof Json]-?: true }) {
  const names = Object.keys(columns);
  const map = (row: object, convert: (value: unknown) => unknown): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...row };
    for (const name of names) {
      const value = out[name];
      if (value !== undefined && value !== null) out[name] = convert(value);
    }
    return out;
  };
  return {
    decode: <Row extends object>(row: Row): Decoded<Row, Json> =>
      map(row, (text) => JSON.parse(text as string)) as Decoded<Row, Json>,
    encode: <Row extends object>(row: Row): Encoded<Row, Json> =>
      map(row, (value) => JSON.stringify(value)) as Encoded<Row, Json>,
  };
}
