export function chromiumArgs(extra?: string[]): string[];
