// Move up, move down and remove for one item of an ordered editor (pipeline steps, survey questions).
export function MoveButtons({
  what,
  index,
  count,
  onMove,
  onRemove,
}: {
  /** the item in words, for the buttons' names: "step 2" */
  what: string;
  index: number;
  count: number;
  onMove(by: -1 | 1): void;
  onRemove(): void;
}) {
  return (
    <div className="move-buttons">
      <button
        type="button"
        className="btn btn-small"
        aria-label={`Move ${what} up`}
        disabled={index === 0}
        onClick={() => onMove(-1)}
      >
        ↑ Up
      </button>
      <button
        type="button"
        className="btn btn-small"
        aria-label={`Move ${what} down`}
        disabled={index === count - 1}
        onClick={() => onMove(1)}
      >
        ↓ Down
      </button>
      <button type="button" className="btn btn-small btn-danger" aria-label={`Remove ${what}`} onClick={onRemove}>
        Remove
      </button>
    </div>
  );
}
