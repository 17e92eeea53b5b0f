/** An error in one line for a log field: `Name: message`, or the value as a string when it is not an Error. */
export function errorLine(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
