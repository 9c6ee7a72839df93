/**
 * For the command-line programs (the simulator, the demo scripts): parses this process's arguments;
 * `--help` (or `-h`) prints the usage and nothing else runs; on a mistake, prints it with the usage
 * and sets exit code 2.
 */
export function parseCommandLine<T>(parse: (args: string[]) => T, usage: string): T | undefined {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usage);
    return undefined;
  }
  try {
    return parse(args);
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage}`);
    process.exitCode = 2;
    return undefined;
  }
}
