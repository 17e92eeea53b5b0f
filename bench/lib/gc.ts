/** Memory measured as the process keeps it: after a pause and two full collections (--expose-gc). */
export async function settle(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  await new Promise((resolve) => setTimeout(resolve, 100));
  gc();
  gc();
  return process.memoryUsage();
}
