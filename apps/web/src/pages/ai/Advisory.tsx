// The mark on every AI answer: the text is a model's, for a person to check, never an instruction Baton follows.
export function Advisory({ children }: { children?: string }) {
  return (
    <p className="ai-advisory">
      <span className="ai-badge">AI</span>
      <span>
        {children ?? 'Advisory: written by a language model from the data you may see. Check it before acting on it.'}
      </span>
    </p>
  );
}
