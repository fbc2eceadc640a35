package dev.fencing.e2e.process;

/** Exit code and captured output of a finished host command. */
public record CommandResult(int exitCode, String stdout, String stderr) {

    /** @return true when the command exited with status 0 */
    public boolean ok() {
        return exitCode == 0;
    }
}
