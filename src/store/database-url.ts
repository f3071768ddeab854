// What a `database` setting is, without loading any database code: the config parser and
// `status` ask this on every start (issue 11 counts every module `status` loads).

/** Whether a database setting names a PostgreSQL server rather than a SQLite file. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** Whether the URL carries a password (the daemon file must not: PGPASSWORD or database_password_file). */
export function urlHasPassword(url: string): boolean {
  try {
    return new URL(url).password !== '';
  } catch {
    return /\/\/[^@/]*:[^@/]*@/.test(url);
  }
}

/** The URL without its password, for messages, logs and `status`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    // Not parseable: hide whatever precedes the host.
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/** Every PostgreSQL URL in `text` with its password hidden (error messages may quote the setting). */
export function redactUrls(text: string): string {
  return text.replace(/postgres(ql)?:\/\/[^\s'"]+/gi, (m) => redactUrl(m));
}

/** The setting as it may be shown: a file as is, a URL without its password. */
export function describeTarget(target: string): string {
  return isPostgresUrl(target) ? redactUrl(target) : target;
}
