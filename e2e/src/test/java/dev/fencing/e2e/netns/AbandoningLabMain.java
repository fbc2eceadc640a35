package dev.fencing.e2e.netns;

import java.nio.file.Path;
import java.util.List;

/**
 * A JVM that creates a lab with a process in it and never closes it, for the teardown tests: with {@code fail} it
 * dies of an uncaught exception (the shutdown hook must clean up), with {@code hang} it waits to be SIGKILLed (only
 * the sweeper can clean up). Prints {@code {"event":"lab","run":"<runId>","pid":<sleep pid>}} first.
 */
public final class AbandoningLabMain {

    private AbandoningLabMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 2 || !List.of("fail", "hang").contains(args[0])) {
            System.err.println("usage: AbandoningLabMain fail|hang LOG_DIR");
            System.exit(2);
        }
        NetnsLab lab = NetnsLab.create(List.of("a", "b"));
        var sleeper = lab.startLogged("a", "sleeper", List.of("sleep", "300"), Path.of(args[1]));
        System.out.println("{\"event\":\"lab\",\"run\":\"" + lab.runId() + "\",\"pid\":" + sleeper.pid() + "}");
        System.out.flush();
        if (args[0].equals("fail")) {
            throw new IllegalStateException("simulated test failure with the lab still open");
        }
        Thread.sleep(Long.MAX_VALUE);
    }
}
