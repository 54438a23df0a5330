// Filled in by the schedules domain (issue 11).
export {};
