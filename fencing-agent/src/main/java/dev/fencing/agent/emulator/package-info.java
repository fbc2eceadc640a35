/**
 * A software watchdog on a FIFO with the Linux softdog's semantics (arm on open, any byte feeds, {@code 'V'} then
 * close disarms unless nowayout, close without it keeps the timer running), which runs a reset command when it
 * expires: the stand-in for {@code /dev/watchdog} in tests, the e2e suite and the demo.
 *
 * <pre>
 * fencing-agent softdog-emulator --fifo /run/fab/node-a.wd --timeout 10s \
 *     --reset-command 'kill -9 $(cat /run/fab/node-a.pid)' [--nowayout] [--events-file /run/fab/node-a.jsonl]
 * </pre>
 *
 * Every event is a JSON line on stdout (and in {@code --events-file}):
 * {@code {"ts":"2026-11-22T10:00:00.123Z","event":"armed","timeoutMs":10000}}; events are {@code started},
 * {@code armed}, {@code feed} (count since the previous feed line, at most one per second), {@code reopen},
 * {@code closed} (without magic close, or with it under nowayout: the timer keeps running), {@code disarmed},
 * {@code reset}, {@code reset-exit} (the command's exit code) and {@code stopped}.
 */
package dev.fencing.agent.emulator;
