/**
 * For the command-line programs (the simulator, the demo scripts): parses this process's arguments;
 * on a mistake, prints it with the usage and sets exit code 2.
 */
export function parseCommandLine<T>(parse: (args: string[]) => T, usage: string): T | undefined {
  try {
    return parse(process.argv.slice(2));
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage}`);
    process.exitCode = 2;
    return undefined;
  }
}
