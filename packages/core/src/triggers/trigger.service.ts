// Filled in by the triggers domain (issue 11).
export {};
