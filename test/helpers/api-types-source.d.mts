export function apiTypesSource(doc: unknown): Promise<string>;
