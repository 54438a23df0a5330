// Filled in by the templates domain (issue 11).
export {};
